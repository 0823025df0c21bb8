import { InvalidArgumentError } from '../../errors';
import { stringSerde } from '../serde/basic-serdes';
import {
  HistoryOptions,
  PUT_RETURN_CODE_NOT_PUT,
  PUT_RETURN_CODE_VALID_TO_UNDEFINED,
  Serde,
  VersionedKeyValueStore,
  VersionedRecord,
} from '../types';
import { deserializeWith, encodeKeyWith, historyBounds, requireQueryTime, requireTimestamp, serializeWith } from '../validation';

/** Options of MemoryVersionedStore. */
export interface MemoryVersionedStoreOptions<K, V> {
  /** History retention (= grace period) in milliseconds. */
  historyRetentionMs: number;
  /** Key serde (default: string). */
  keySerde?: Serde<K>;
  /** Value serde (default: string). */
  valueSerde?: Serde<V>;
}

interface Version {
  ts: number;
  value: Buffer | null;
}

interface KeyEntry {
  versions: Version[]; // ascending by ts, unique ts
}

/** In-memory KIP-889 versioned store: the reference implementation of the exact semantics. */
export class MemoryVersionedStore<K, V> implements VersionedKeyValueStore<K, V> {
  private readonly retention: number;
  private readonly keySerde: Serde<K>;
  private readonly valueSerde: Serde<V>;
  private readonly entries = new Map<string, KeyEntry>();
  private streamTime = Number.NEGATIVE_INFINITY;

  constructor(options: MemoryVersionedStoreOptions<K, V>) {
    const r = options.historyRetentionMs;
    if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0) {
      throw new InvalidArgumentError(`historyRetentionMs must be a non-negative safe integer, got ${String(r)}`);
    }
    this.retention = r;
    this.keySerde = options.keySerde ?? (stringSerde as unknown as Serde<K>);
    this.valueSerde = options.valueSerde ?? (stringSerde as unknown as Serde<V>);
  }

  /** The observed stream time (largest timestamp put or deleted), or -Infinity. */
  observedStreamTime(): number {
    return this.streamTime;
  }

  /** Adds a version; returns validTo, -1 when latest, PUT_RETURN_CODE_NOT_PUT when older than the grace period. */
  async put(key: K, value: V | null, timestamp: number): Promise<number> {
    const id = this.keyId(key);
    requireTimestamp(timestamp);
    const bytes = value === null ? null : serializeWith(this.valueSerde, value, 'value');
    if (timestamp < this.horizon()) return PUT_RETURN_CODE_NOT_PUT;
    this.streamTime = Math.max(this.streamTime, timestamp);
    return this.insert(id, bytes, timestamp);
  }

  /** KIP-889 delete: the record valid at timestamp (or null), then a tombstone at timestamp. */
  async delete(key: K, timestamp: number): Promise<VersionedRecord<V> | null> {
    const id = this.keyId(key);
    requireTimestamp(timestamp);
    if (timestamp < this.horizon()) return null;
    const existing = this.lookupAsOf(id, timestamp);
    this.streamTime = Math.max(this.streamTime, timestamp);
    this.insert(id, null, timestamp);
    return existing;
  }

  /** Latest record, or the record valid as of asOfTimestamp (KIP-889 rule below the retention horizon). */
  async get(key: K, asOfTimestamp?: number): Promise<VersionedRecord<V> | null> {
    const id = this.keyId(key);
    if (asOfTimestamp === undefined) {
      const versions = this.entries.get(id)?.versions ?? [];
      return this.toRecord(versions[versions.length - 1]);
    }
    return this.lookupAsOf(id, requireQueryTime(asOfTimestamp, 'asOfTimestamp'));
  }

  /**
   * KIP-968 history. When toTime is below the retention horizon only the newest version may answer (if it is a value
   * with timestamp ≤ toTime, without validTo), as get(key, asOf) does; otherwise every non-tombstone version valid at
   * some point in [fromTime, toTime] whose validTo is after the horizon.
   */
  async history(key: K, options?: HistoryOptions): Promise<VersionedRecord<V>[]> {
    const id = this.keyId(key);
    const { fromTime, toTime, order } = historyBounds(options);
    const versions = this.entries.get(id)?.versions ?? [];
    const horizon = this.horizon();
    if (toTime < horizon) {
      const latest = versions[versions.length - 1];
      const rec = latest !== undefined && latest.ts <= toTime ? this.toRecord(latest) : null;
      return rec === null ? [] : [rec];
    }
    const out: VersionedRecord<V>[] = [];
    for (let i = 0; i < versions.length; i++) {
      const v = versions[i];
      const validTo = i + 1 < versions.length ? versions[i + 1].ts : undefined;
      if (v.value === null || v.ts > toTime) continue;
      if (validTo !== undefined && (validTo <= fromTime || validTo <= horizon)) continue;
      const rec: VersionedRecord<V> = { value: deserializeWith(this.valueSerde, v.value, 'value'), timestamp: v.ts };
      if (validTo !== undefined) rec.validTo = validTo;
      out.push(rec);
    }
    return order === 'desc' ? out.reverse() : out;
  }

  /** No-op (nothing to persist). */
  async flush(): Promise<void> {}

  /** No-op; the store stays usable (a reopen in tests returns the same instance). */
  async close(): Promise<void> {}

  private horizon(): number {
    return this.streamTime - this.retention;
  }

  private keyId(key: K): string {
    return encodeKeyWith(this.keySerde, key).toString('hex');
  }

  /** KIP-889 get(key, asOf): below the horizon only the latest version answers; else the floor version with its validTo. */
  private lookupAsOf(id: string, asOf: number): VersionedRecord<V> | null {
    const versions = this.entries.get(id)?.versions ?? [];
    if (asOf < this.horizon()) {
      const latest = versions[versions.length - 1];
      return latest !== undefined && latest.ts <= asOf ? this.toRecord(latest) : null;
    }
    const idx = floorIndex(versions, asOf);
    if (idx < 0) return null;
    return this.toRecord(versions[idx], idx + 1 < versions.length ? versions[idx + 1].ts : undefined);
  }

  private toRecord(v: Version | undefined, validTo?: number): VersionedRecord<V> | null {
    if (v === undefined || v.value === null) return null;
    const rec: VersionedRecord<V> = { value: deserializeWith(this.valueSerde, v.value, 'value'), timestamp: v.ts };
    if (validTo !== undefined) rec.validTo = validTo;
    return rec;
  }

  private insert(id: string, value: Buffer | null, ts: number): number {
    let entry = this.entries.get(id);
    if (entry === undefined) {
      entry = { versions: [] };
      this.entries.set(id, entry);
    }
    const versions = entry.versions;
    const idx = floorIndex(versions, ts);
    let pos: number;
    if (idx >= 0 && versions[idx].ts === ts) {
      versions[idx] = { ts, value };
      pos = idx;
    } else {
      pos = idx + 1;
      versions.splice(pos, 0, { ts, value });
    }
    const validTo = pos + 1 < versions.length ? versions[pos + 1].ts : PUT_RETURN_CODE_VALID_TO_UNDEFINED;
    this.prune(versions);
    return validTo;
  }

  /** Drops versions whose validTo is at or below the horizon (they can never be read again). */
  private prune(versions: Version[]): void {
    const horizon = this.horizon();
    let drop = 0;
    while (drop + 1 < versions.length && versions[drop + 1].ts <= horizon) drop++;
    if (drop > 0) versions.splice(0, drop);
  }
}

/** Index of the version with the largest ts <= t, or -1. */
function floorIndex(versions: Version[], t: number): number {
  let lo = 0;
  let hi = versions.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (versions[mid].ts <= t) {
      ans = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return ans;
}
