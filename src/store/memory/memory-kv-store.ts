import { InvalidArgumentError } from '../../errors';
import { stringSerde } from '../serde/basic-serdes';
import { ByteRange, inRange, isEmptyRange, keyBounds, prefixRange } from '../key-range';
import { KeyValue, KeyValueStore, Serde } from '../types';
import { deserializeWith, encodeKeyWith, serializeWith } from '../validation';

/** Options of MemoryKeyValueStore. */
export interface MemoryKeyValueStoreOptions<K, V> {
  /** Key serde (default: string); its encoding defines scan order. */
  keySerde?: Serde<K>;
  /** Value serde (default: string). */
  valueSerde?: Serde<V>;
}

interface Entry {
  key: Buffer;
  value: Buffer;
}

/** In-memory key-value store ordered by encoded key bytes (the reference for the Cassandra KV store). */
export class MemoryKeyValueStore<K, V> implements KeyValueStore<K, V> {
  private readonly keySerde: Serde<K>;
  private readonly valueSerde: Serde<V>;
  private readonly entries: Entry[] = []; // sorted by Buffer.compare(key)

  constructor(options: MemoryKeyValueStoreOptions<K, V> = {}) {
    this.keySerde = options.keySerde ?? (stringSerde as unknown as Serde<K>);
    this.valueSerde = options.valueSerde ?? (stringSerde as unknown as Serde<V>);
  }

  /** Value of key, or null. */
  async get(key: K): Promise<V | null> {
    const k = this.encodeKey(key);
    const i = this.find(k);
    return i.found ? this.decodeValue(this.entries[i.index].value) : null;
  }

  /** Sets (or with null, deletes) the value of key. */
  async put(key: K, value: V | null): Promise<void> {
    const k = this.encodeKey(key);
    const v = value === null ? null : serializeWith(this.valueSerde, value, 'value');
    this.write(k, v);
  }

  /** Puts only if absent; returns the existing value, or null when the put happened. */
  async putIfAbsent(key: K, value: V): Promise<V | null> {
    const k = this.encodeKey(key);
    if (value === null) throw new InvalidArgumentError('putIfAbsent value must not be null');
    const v = serializeWith(this.valueSerde, value, 'value');
    const i = this.find(k);
    if (i.found) return this.decodeValue(this.entries[i.index].value);
    this.write(k, v);
    return null;
  }

  /** Puts every entry (all are validated before any is applied). */
  async putAll(entries: KeyValue<K, V | null>[]): Promise<void> {
    const encoded = entries.map((e) => ({
      k: this.encodeKey(e.key),
      v: e.value === null ? null : serializeWith(this.valueSerde, e.value, 'value'),
    }));
    for (const e of encoded) this.write(e.k, e.v);
  }

  /** Deletes key; returns the previous value or null. */
  async delete(key: K): Promise<V | null> {
    const k = this.encodeKey(key);
    const i = this.find(k);
    if (!i.found) return null;
    const [old] = this.entries.splice(i.index, 1);
    return this.decodeValue(old.value);
  }

  /** Keys in [from, to] in encoded-byte order. */
  range(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    return this.scan(keyBounds(from, to, this.encodeKey), false);
  }

  /** Keys in [from, to] in descending encoded-byte order. */
  reverseRange(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    return this.scan(keyBounds(from, to, this.encodeKey), true);
  }

  /** Every entry in encoded-byte order. */
  all(): AsyncIterable<KeyValue<K, V>> {
    return this.scan({}, false);
  }

  /** Every entry in descending order. */
  reverseAll(): AsyncIterable<KeyValue<K, V>> {
    return this.scan({}, true);
  }

  /** Entries whose encoded key starts with the encoded prefix. */
  prefixScan<P>(prefix: P, prefixSerde: Serde<P>): AsyncIterable<KeyValue<K, V>> {
    return this.scan(prefixRange(encodeKeyWith(prefixSerde, prefix)), false);
  }

  /** Exact number of entries. */
  async approximateNumEntries(): Promise<number> {
    return this.entries.length;
  }

  /** No-op. */
  async close(): Promise<void> {}

  private async *scan(range: ByteRange, reverse: boolean): AsyncIterable<KeyValue<K, V>> {
    if (isEmptyRange(range)) return;
    // Snapshot so concurrent writes do not disturb the iteration.
    const snapshot = this.entries.filter((e) => inRange(e.key, range));
    if (reverse) snapshot.reverse();
    for (const e of snapshot) {
      yield { key: deserializeWith(this.keySerde, e.key, 'key'), value: this.decodeValue(e.value) };
    }
  }

  private readonly encodeKey = (key: K): Buffer => encodeKeyWith(this.keySerde, key);

  private decodeValue(bytes: Buffer): V {
    return deserializeWith(this.valueSerde, bytes, 'value');
  }

  private write(k: Buffer, v: Buffer | null): void {
    const i = this.find(k);
    if (v === null) {
      if (i.found) this.entries.splice(i.index, 1);
    } else if (i.found) {
      this.entries[i.index] = { key: k, value: v };
    } else {
      this.entries.splice(i.index, 0, { key: k, value: v });
    }
  }

  private find(k: Buffer): { found: boolean; index: number } {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (Buffer.compare(this.entries[mid].key, k) < 0) lo = mid + 1;
      else hi = mid;
    }
    return { found: lo < this.entries.length && this.entries[lo].key.equals(k), index: lo };
  }
}
