import { StoreError } from '../../errors';
import {
  HistoryOptions,
  PUT_RETURN_CODE_NOT_PUT,
  PUT_RETURN_CODE_VALID_TO_UNDEFINED,
  RowListener,
  Serde,
  VersionedKeyValueStore,
  VersionedRecord,
} from '../types';
import { deserializeWith, encodeKeyWith, historyBounds, requireQueryTime, requireTimestamp, serializeWith } from '../validation';
import { keyHash } from './key-hash';
import { RetentionCleaner, RetentionCleanerOptions } from './retention-cleaner';
import { StreamTimeTable } from './stream-time-table';
import { TypedColumns } from './typed-columns';
import { RowsVersionWriter } from './rows-version-writer';
import { asOfAnswer, historyRecords, RawVersion, RowLocator, VersionedTableReader, VersionReads } from './versioned-table-reader';
import { EdgeTableReader } from './edge-table-reader';
import { cleanEdgesBelow, EdgeWriter } from './edge-writer';
import { KeyOrder } from './key-order';
import { cleanRowsBelow, deleteRowsBefore } from './rows-cleanup';

/** Everything a CassandraVersionedStore needs once its schema exists (built by openCassandraVersionedStore). */
export interface CassandraVersionedStoreParts<K, V> {
  reader: VersionedTableReader;
  streamTimes: StreamTimeTable;
  /** Table name, used as the store id in adjunct_stream_time. */
  storeId: string;
  writerId: string;
  /** True when the table keeps `writer` as a regular cell (tables created before it became a clustering column). */
  writerIsCell: boolean;
  partition?: number;
  historyRetentionMs: number;
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
  initialStreamTime: number;
  cleaner: Omit<RetentionCleanerOptions, 'onError'> & { onError?: (e: unknown) => void };
  /** Typed columns written alongside the layout's columns in the same INSERT (opt-in). */
  typed?: TypedColumns;
  /** The edge layout (global tables created with it): its reads and its writer. */
  edges?: { reader: EdgeTableReader; writer: EdgeWriter };
}

/** A version accepted by the grace period: its encoded key and value, and whether it is in order for the stream. */
interface Accepted {
  key: Buffer;
  bytes: Buffer | null;
  inOrder: boolean;
}

/**
 * KIP-889 versioned store on a Cassandra table. In-order puts cost one write; out-of-order puts one read + one write;
 * latest gets one read; as-of gets two reads in parallel (the version and the next one, for validTo); on an edge-layout
 * table (parts.edges) puts go through its EdgeWriter and every get is one read. Stream time is
 * persisted by flush(); expired versions are range-deleted in the background, blind (see RetentionCleaner). Every row
 * records this writer's id.
 * Operations of one instance are meant to be issued by a single writer (one source partition, or the global consumer).
 */
export class CassandraVersionedStore<K, V> implements VersionedKeyValueStore<K, V> {
  private readonly reader: VersionedTableReader;
  /** The reads of the table's layout (the rows reader, or the edge layout's). */
  private readonly reads: VersionReads;
  /** The source partition of every row this store writes (validated once; undefined for global tables). */
  private readonly partition: number | undefined;
  private readonly retention: number;
  private readonly cleaner: RetentionCleaner;
  private streamTime: number;
  private persistedStreamTime: number;
  /** Set when close() is called: operations are refused from then on. */
  private closing?: Promise<void>;
  /** Set when close() has flushed: flush is refused too. */
  private closed = false;
  /** The rows layout's write of one version (unused on an edge-layout table). */
  private readonly rows: RowsVersionWriter<K, V>;
  /** The order of the API's operations on each key (put, write, delete, get): each runs after those called before it. */
  private readonly order = new KeyOrder();

  constructor(private readonly parts: CassandraVersionedStoreParts<K, V>) {
    this.reader = parts.reader;
    this.reads = parts.edges?.reader ?? parts.reader;
    this.partition = parts.reader.partitionFor(parts.partition);
    this.rows = new RowsVersionWriter(parts.reader, this.partition, parts.writerId, parts.writerIsCell, parts.typed);
    this.retention = parts.historyRetentionMs;
    this.streamTime = parts.initialStreamTime;
    this.persistedStreamTime = parts.initialStreamTime;
    const edges = parts.edges;
    // The edge layout keeps a version's value row wherever its predecessor put it, so its clean-up reads (see cleanEdgesBelow).
    const actions =
      edges === undefined
        ? {
            deleteBefore: (key: Buffer, anchor: number) => deleteRowsBefore(this.reader, key, this.partition, anchor),
            // At the persisted horizon (the one readers apply; the live one runs ahead of it until the next commit).
            cleanAtHorizon: (key: Buffer) => cleanRowsBelow(this.reader, key, this.partition, this.persistedStreamTime - this.retention),
          }
        : { deleteBefore: (key: Buffer) => this.cleanupEdges(key), cleanAtHorizon: (key: Buffer) => this.cleanupEdges(key) };
    this.cleaner = new RetentionCleaner(actions, parts.cleaner);
  }

  /** The observed stream time of this writer, or -Infinity. */
  observedStreamTime(): number {
    return this.streamTime;
  }

  /** Number of background retention clean-ups done (completed, of which with a read; failed). */
  cleanupStats(): { completed: number; reads: number; failed: number } {
    return { completed: this.cleaner.completed, reads: this.cleaner.reads, failed: this.cleaner.failed };
  }

  /** Adds a version; in-order = 1 write, out-of-order = 1 read + 1 write, expired = nothing sent. */
  put(key: K, value: V | null, timestamp: number): Promise<number> {
    // Only a late put on the rows layout reads (its validTo); the edge writer plans from what it keeps, in call order.
    const readsWhenLate = this.parts.edges === undefined;
    return this.acceptThen(key, value, timestamp, PUT_RETURN_CODE_NOT_PUT, readsWhenLate, (v) =>
      this.putAccepted(v, timestamp, value, key),
    );
  }

  /**
   * Decides a put now (accept: grace period, stream time, in call order), then runs `send` in the key's order (KeyOrder:
   * as a read when it is late and `readsWhenLate`, else as a write); `expired` when older than the grace period.
   */
  private acceptThen<T>(
    key: K,
    value: V | null,
    timestamp: number,
    expired: T,
    readsWhenLate: boolean,
    send: (v: Accepted) => Promise<T>,
  ): Promise<T> {
    let v: Accepted | null;
    try {
      v = this.accept(key, value, timestamp);
    } catch (e) {
      return Promise.reject(e);
    }
    const accepted = v;
    if (accepted === null) return Promise.resolve(expired);
    return readsWhenLate && !accepted.inOrder
      ? this.order.read(accepted.key, () => send(accepted))
      : this.order.write(accepted.key, () => send(accepted));
  }

  /** The writes (and the read for validTo) of an accepted put, in the key's order. */
  private async putAccepted(v: Accepted, timestamp: number, value: V | null, key: K): Promise<number> {
    let validTo = PUT_RETURN_CODE_VALID_TO_UNDEFINED;
    if (this.parts.edges !== undefined) {
      // The edge writer plans the put from the key's version times it knows (or one read): its validTo comes with the plan.
      await new Promise<void>((resolve, reject) =>
        this.parts.edges!.writer.send(v.key, keyHash(v.key), timestamp, v.bytes, { rowWritten: resolve, rowFailed: reject }, (next) => {
          if (next !== undefined) validTo = next;
        }),
      );
    } else if (v.inOrder) {
      await this.insert(v.key, timestamp, v.bytes, value, key);
    } else {
      // The read only sees versions strictly newer than timestamp, so it can run alongside the write.
      const [next] = await Promise.all([
        this.reader.after(this.locator(v.key), timestamp),
        this.insert(v.key, timestamp, v.bytes, value, key),
      ]);
      if (next !== null) validTo = next.validFrom;
    }
    this.cleaner.trackWritten(v.key, timestamp);
    return validTo;
  }

  /**
   * KIP-889 put semantics (grace period, stream time, tombstones) without computing the returned validTo, so an in-order
   * or out-of-order version costs exactly one write and no read.
   */
  write(key: K, value: V | null, timestamp: number): Promise<'written' | 'expired'> {
    return this.acceptThen<'written' | 'expired'>(
      key,
      value,
      timestamp,
      'expired',
      false,
      (v) =>
        new Promise((resolve, reject) =>
          this.sendAccepted(v, timestamp, value, key, { rowWritten: () => resolve('written'), rowFailed: reject }),
        ),
    );
  }

  /**
   * The sink's write path: `write` with a listener instead of a promise. The put decision happens now, in call order:
   * 'expired' (nothing sent, the listener is not called) or 'issued' (the listener hears when the row is durable).
   * `valueBytes` and `keyBytes`, when given, are `value` and `key` already serialised with the store's serdes (the sink's
   * pass-through of the record's own bytes).
   */
  issue(key: K, value: V | null, timestamp: number, listener: RowListener, valueBytes?: Buffer, keyBytes?: Buffer): 'issued' | 'expired' {
    const v = this.accept(key, value, timestamp, valueBytes, keyBytes);
    if (v === null) return 'expired';
    this.sendAccepted(v, timestamp, value, key, listener);
    return 'issued';
  }

  /** Sends an accepted version. The key is hashed once, for the cleaner and the batcher's rowId; tracked in put order. */
  private sendAccepted(v: Pick<Accepted, 'key' | 'bytes'>, timestamp: number, value: V | null, key: K, listener: RowListener): void {
    const hash = keyHash(v.key);
    const anchor = this.cleaner.track(v.key, timestamp, hash);
    this.sendVersion(
      v.key,
      timestamp,
      v.bytes,
      value,
      key,
      anchor === undefined ? listener : this.cleaner.anchorListener(anchor, listener),
      hash,
    );
  }

  /**
   * The synchronous part of put/write, decided in call order before anything is sent: validates and encodes the
   * version, applies the grace period and advances stream time. Null when the version is older than the grace period.
   */
  private accept(key: K, value: V | null, timestamp: number, valueBytes?: Buffer, keyBytes?: Buffer): Accepted | null {
    const k = keyBytes ?? encodeKeyWith(this.parts.keySerde, key);
    requireTimestamp(timestamp);
    const bytes = value === null ? null : (valueBytes ?? serializeWith(this.parts.valueSerde, value, 'value'));
    this.ensureOpen();
    if (timestamp < this.horizon()) return null;
    const inOrder = timestamp >= this.streamTime;
    this.streamTime = Math.max(this.streamTime, timestamp);
    return { key: k, bytes, inOrder };
  }

  /** KIP-889 delete: reads the record valid at timestamp (with its validTo: two reads in parallel), then writes a tombstone. */
  async delete(key: K, timestamp: number): Promise<VersionedRecord<V> | null> {
    const k = encodeKeyWith(this.parts.keySerde, key);
    requireTimestamp(timestamp);
    this.ensureOpen();
    const horizon = this.horizon();
    if (timestamp < horizon) return null;
    // Decided in call order, like a put: the stream time moves now, the read sees the key's earlier writes, and later
    // reads of the key see this tombstone.
    this.streamTime = Math.max(this.streamTime, timestamp);
    const pair = await this.order.read(k, async () => {
      const found = await this.reads.asOfWithNext(this.locator(k), timestamp);
      await this.insert(k, timestamp, null, null, key);
      this.cleaner.trackWritten(k, timestamp);
      return found;
    });
    const existing = asOfAnswer(pair, timestamp, horizon);
    return existing === null ? null : this.toRecord(existing.version, existing.validTo);
  }

  /**
   * Latest record (one read), or the record valid as of asOfTimestamp with its validTo when a newer version exists
   * (two reads issued in parallel). Below this writer's retention horizon only the latest version answers.
   */
  async get(key: K, asOf?: number): Promise<VersionedRecord<V> | null> {
    const loc = this.locator(encodeKeyWith(this.parts.keySerde, key));
    const asOfTimestamp = asOf === undefined ? undefined : requireQueryTime(asOf, 'asOfTimestamp');
    this.ensureOpen();
    // Stream time as of the call: a put called after this get does not move its horizon.
    const horizon = this.horizon();
    return this.order.read(loc.key, () => this.getNow(loc, asOfTimestamp, horizon));
  }

  /** get, once the key's operations called before it settled, with the horizon as of the call. */
  private async getNow(loc: RowLocator, asOfTimestamp: number | undefined, horizon: number): Promise<VersionedRecord<V> | null> {
    if (asOfTimestamp === undefined) return this.toRecord(await this.reads.latest(loc));
    if (asOfTimestamp < horizon) {
      // This writer's horizon is known before reading: only the latest version may answer (one read, no validTo).
      const latest = await this.reads.latest(loc);
      return latest !== null && latest.validFrom <= asOfTimestamp ? this.toRecord(latest) : null;
    }
    const answer = asOfAnswer(await this.reads.asOfWithNext(loc, asOfTimestamp), asOfTimestamp, horizon);
    return answer === null ? null : this.toRecord(answer.version, answer.validTo);
  }

  /** KIP-968 history: one paged descending query plus, when toTime is set, one read (in parallel) for the newest's validTo. */
  async history(key: K, options?: HistoryOptions): Promise<VersionedRecord<V>[]> {
    const loc = this.locator(encodeKeyWith(this.parts.keySerde, key));
    const { fromTime, toTime, order } = historyBounds(options);
    this.ensureOpen();
    const entries = await this.reads.history(loc, fromTime, toTime, () => this.horizon());
    return historyRecords(entries, this.parts.valueSerde, order);
  }

  /**
   * Persists stream time (one write, skipped if unchanged), then starts the blind clean-up of keys whose anchor the
   * persisted horizon reached. Without streamTimeAsOf (API users, close) it also cleans every tracked key with a read.
   */
  async flush(streamTimeAsOf?: number): Promise<void> {
    if (this.closed) throw this.closedError();
    // The sink passes the stream time as of the offset it is about to commit, so a restart replays from there exactly.
    const st = streamTimeAsOf !== undefined ? Math.min(streamTimeAsOf, this.streamTime) : this.streamTime;
    if (Number.isFinite(st) && st !== this.persistedStreamTime) {
      await this.parts.streamTimes.save(this.parts.storeId, this.parts.writerId, st);
      this.persistedStreamTime = st;
    }
    // Expiry follows the persisted stream time, so a restart (which resumes from it) never sees a version removed
    // that its horizon still shows. The sink checkpoints on every commit; a plain flush() (API users, close) drains.
    if (streamTimeAsOf === undefined) await this.cleaner.drain();
    else this.cleaner.expireUpTo(this.persistedStreamTime - this.retention);
  }

  /**
   * Refuses further operations at once, waits for those called before it (a put queued behind a read included), then
   * flushes (the shared client stays open). A second call waits for the first.
   */
  close(): Promise<void> {
    this.closing ??= this.order
      .idle()
      .then(() => this.flush())
      .then(
        () => {
          this.closed = true;
        },
        (e: unknown) => {
          // A flush that failed (Cassandra unavailable) leaves the store open, as before: close may be called again.
          this.closing = undefined;
          throw e;
        },
      );
    return this.closing;
  }

  private horizon(): number {
    return this.streamTime - this.retention;
  }

  private ensureOpen(): void {
    if (this.closing !== undefined) throw this.closedError();
  }

  private closedError(): StoreError {
    return new StoreError(`versioned store ${this.parts.storeId} is closed`, { code: 'STORE_CLOSED', retriable: false });
  }

  /** Where a key's rows live, for the reader's read methods. */
  private locator(key: Buffer): RowLocator {
    return { key, partition: this.partition };
  }

  /** One write of a version; resolves when it is durable. */
  private insert(key: Buffer, timestamp: number, value: Buffer | null, typedValue: V | null = null, typedKey?: K): Promise<void> {
    return new Promise((resolve, reject) =>
      this.sendVersion(key, timestamp, value, typedValue, typedKey, { rowWritten: resolve, rowFailed: reject }),
    );
  }

  /** Sends one version: through the edge layout's writer, or as the rows layout's row. `hash` is keyHash(key). */
  private sendVersion(
    key: Buffer,
    timestamp: number,
    value: Buffer | null,
    typedValue: V | null,
    typedKey: K | undefined,
    listener: RowListener,
    hash = keyHash(key),
  ): void {
    if (this.parts.edges !== undefined) this.parts.edges.writer.send(key, hash, timestamp, value, listener);
    else this.rows.send(key, timestamp, value, typedValue, typedKey, listener, hash);
  }

  private toRecord(v: RawVersion | null, validTo?: number): VersionedRecord<V> | null {
    if (v === null || v.value === null) return null;
    const rec: VersionedRecord<V> = { value: deserializeWith(this.parts.valueSerde, v.value, 'value'), timestamp: v.validFrom };
    if (validTo !== undefined) rec.validTo = validTo;
    return rec;
  }

  /** The edge layout's clean-up at the persisted horizon (one paged read, then at most one range delete). */
  private async cleanupEdges(key: Buffer): Promise<void> {
    const horizon = this.persistedStreamTime - this.retention;
    if (Number.isFinite(horizon) && horizon > 0) await cleanEdgesBelow(this.parts.edges!.reader, key, horizon);
  }
}
