/** validTo returned by put() when the new record is the latest version of its key. */
export const PUT_RETURN_CODE_VALID_TO_UNDEFINED = -1;
/** Returned by put() when the record is older than the grace period and was not applied: Kafka's Long.MIN_VALUE (−2^63, exact as a number). */
export const PUT_RETURN_CODE_NOT_PUT = -(2 ** 63);

/** One version of a key: its value, the timestamp it became valid, and (when known) when it stopped being valid. */
export interface VersionedRecord<V> {
  value: V;
  timestamp: number;
  validTo?: number;
}

/** Options of a KIP-968 multi-version query. */
export interface HistoryOptions {
  /** Inclusive lower bound of the validity window. */
  fromTime?: number;
  /** Inclusive upper bound of the validity window. */
  toTime?: number;
  /** Order of the result by timestamp. Default newest first (`desc`), as Kafka Streams answers ResultOrder.ANY. */
  order?: 'asc' | 'desc';
}

/** Where a store's rows live: one Cassandra partition per source partition, or one per key (global). */
export type StoreScope = 'partitioned' | 'global';

/** Kind of a store: KIP-889 versioned or latest-value key-value. */
export type StoreKind = 'versioned' | 'kv';

/** KIP-889 versioned key-value store (async). */
export interface VersionedKeyValueStore<K, V> {
  /** Adds a version (null value = tombstone); returns its validTo, -1 if latest, PUT_RETURN_CODE_NOT_PUT if expired. */
  put(key: K, value: V | null, timestamp: number): Promise<number>;
  /** Deletes at the given time; returns the record valid at that time (inclusive, with validTo if not the newest) or null. */
  delete(key: K, timestamp: number): Promise<VersionedRecord<V> | null>;
  /**
   * Latest record, or the record valid as of asOfTimestamp (inclusive) with validTo = the next version's timestamp
   * (value or tombstone) when it is not the newest. Below streamTime − historyRetention only the newest version answers.
   */
  get(key: K, asOfTimestamp?: number): Promise<VersionedRecord<V> | null>;
  /** Every version valid at some point in [fromTime, toTime], with validTo; below the horizon only the newest (as get). */
  history(key: K, options?: HistoryOptions): Promise<VersionedRecord<V>[]>;
  /** The observed stream time of this writer (largest timestamp passed to put/delete), or -Infinity. */
  observedStreamTime(): number;
  /** Persists the observed stream time (called before committing source offsets). */
  flush(streamTimeAsOf?: number): Promise<void>;
  /** Flushes and releases resources (does not close the shared client). */
  close(): Promise<void>;
}

/** A key with its value, as returned by range scans. */
export interface KeyValue<K, V> {
  key: K;
  value: V;
}

/** Latest-value key-value store (async), the Kafka Streams KeyValueStore operations. */
export interface KeyValueStore<K, V> {
  /** Value of key, or null. */
  get(key: K): Promise<V | null>;
  /** Sets (or with null, deletes) the value of key. */
  put(key: K, value: V | null): Promise<void>;
  /** Puts only if absent; returns the previous value (null if it was absent and the put happened). */
  putIfAbsent(key: K, value: V): Promise<V | null>;
  /** Puts every entry. */
  putAll(entries: KeyValue<K, V | null>[]): Promise<void>;
  /** Deletes key; returns the previous value or null. */
  delete(key: K): Promise<V | null>;
  /** Keys in [from, to] (inclusive, either bound optional) in encoded-byte order. */
  range(from?: K, to?: K): AsyncIterable<KeyValue<K, V>>;
  /** Same as range, in descending order. */
  reverseRange(from?: K, to?: K): AsyncIterable<KeyValue<K, V>>;
  /** Every entry in encoded-byte order. */
  all(): AsyncIterable<KeyValue<K, V>>;
  /** Every entry in descending order. */
  reverseAll(): AsyncIterable<KeyValue<K, V>>;
  /** Entries whose encoded key starts with the encoded prefix. */
  prefixScan<P>(prefix: P, prefixSerde: Serde<P>): AsyncIterable<KeyValue<K, V>>;
  /** Number of entries; opt-in for Cassandra since it is a COUNT(*). */
  approximateNumEntries(): Promise<number>;
  /** Releases resources (does not close the shared client). */
  close(): Promise<void>;
}

/** Converts a value to bytes and back. Key serdes must preserve order in their encoding to make ranges meaningful. */
export interface Serde<T> {
  /** Name used in configs and metadata. */
  readonly name: string;
  serialize(value: T): Buffer;
  deserialize(bytes: Buffer): T;
}

/** Told once when a row write is durable (acknowledged by the store), or failed for good: the sink's per-row callback. */
export interface RowListener {
  rowWritten(): void;
  rowFailed(error: unknown): void;
  /** True once nobody waits for the row any more (its task stopped): retries of a request whose rows are all abandoned give up. */
  abandoned?(): boolean;
  /**
   * True once the row must not be written at all (its partition was revoked: another worker may write newer versions of
   * its key now). A row not sent yet is then dropped (failed unsent); one in flight keeps its earlier client timestamp.
   */
  revoked?(): boolean;
}
