import { keyHash } from './key-hash';

/** Default number of buckets of a global key-value table (fixed for a table's lifetime). */
export const DEFAULT_KV_BUCKETS = 16;

/**
 * Default number of key-hash buckets per source partition of a partitioned table. 64 keeps every Cassandra partition
 * near 1/64 of a Kafka partition: 10M keys on 6 partitions with ~3 live versions of ~250 bytes make ~78k rows, ~20 MB
 * per bucket (Cassandra advises < ~100k rows / ~100 MB), while a scan of one source partition merges 64 paged streams.
 */
export const DEFAULT_PARTITION_BUCKETS = 64;

/** The default buckets of a table of `scope`: DEFAULT_KV_BUCKETS for global tables, DEFAULT_PARTITION_BUCKETS per source partition. */
export function defaultBuckets(scope: 'global' | 'partitioned'): number {
  return scope === 'global' ? DEFAULT_KV_BUCKETS : DEFAULT_PARTITION_BUCKETS;
}

/** Most buckets a table may have (a scan opens one paged stream per bucket). */
export const MAX_BUCKETS = 4096;

/** Stable bucket of an encoded key: FNV-1a 32 of the key bytes modulo buckets (global kv tables and partitioned tables). */
export function bucketOf(key: Buffer, buckets: number): number {
  return bucketOfHash(keyHash(key), buckets);
}

/** bucketOf for a key whose keyHash the caller already has (the write path hashes each key once). */
export function bucketOfHash(hash: number, buckets: number): number {
  return (hash >>> 0) % buckets;
}

/** The big-endian int32 serialisation of a single int partition key (its routing key). */
export function int32RoutingKey(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeInt32BE(n, 0);
  return b;
}

/**
 * The routing key of a composite `(partition int, bucket int)` partition key, as Cassandra hashes it for its token:
 * each component as a 2-byte length, its bytes and an end-of-component 0 byte.
 */
export function partitionBucketRoutingKey(partition: number, bucket: number): Buffer {
  const b = Buffer.alloc(14);
  b.writeUInt16BE(4, 0);
  b.writeInt32BE(partition, 2);
  b.writeUInt16BE(4, 7);
  b.writeInt32BE(bucket, 9);
  return b;
}
