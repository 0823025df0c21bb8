import { z } from 'zod';
import { CASSANDRA_BATCH_WARN_BYTES } from '../store/cassandra';
import { ByteSize, Duration, Identifier } from './primitives';

/** TLS of a client: on/off, or CA, certificate and key (inline PEM or file paths). */
export const Tls = z.union([
  z.boolean(),
  z.strictObject({
    ca: z.string().optional().describe('PEM CA certificate(s) or a path to a PEM file'),
    cert: z.string().optional(),
    key: z.string().optional(),
    rejectUnauthorized: z.boolean().default(true),
  }),
]);

/** Kafka connection settings. */
export const KafkaConfig = z.strictObject({
  brokers: z.array(z.string().min(1)).min(1).describe('bootstrap brokers, host:port'),
  clientId: z.string().default('adjunct'),
  ssl: Tls.optional(),
  sasl: z
    .strictObject({
      mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']),
      username: z.string(),
      password: z.string(),
    })
    .optional(),
  connectionTimeout: Duration.default(10_000),
  requestTimeout: Duration.default(30_000),
  startupTimeout: Duration.default(60_000).describe(
    'how long a starting worker waits for a Kafka broker to answer (retrying with backoff) before it fails with KAFKA_UNAVAILABLE',
  ),
  sessionTimeout: Duration.default(30_000),
  heartbeatInterval: Duration.default(3_000),
  progressTimeout: Duration.optional().describe(
    "restart a pipeline task's consumer from its committed offsets when an assigned partition has records to read but no batch was fetched for this long (default 4 × sessionTimeout; 0 turns the watchdog off)",
  ),
  fetch: z
    .strictObject({
      maxBytesPerPartition: ByteSize.default(256 << 10).describe(
        "most bytes one fetch returns per partition (Kafka's max.partition.fetch.bytes; a larger first record batch still comes whole)",
      ),
      maxBytes: ByteSize.default(1 << 20).describe("most bytes one fetch returns (Kafka's fetch.max.bytes)"),
    })
    .prefault({})
    .describe(
      'consumer fetch sizes: kafkajs decodes a whole fetch at once, so smaller fetches keep the write path fed (bench: 256 KiB/1 MiB beat 1 MiB/4 MiB in 5 of 5 paired runs)',
    ),
});

/** A Cassandra consistency level by its driver name. */
export const Consistency = z.enum(['one', 'localOne', 'quorum', 'localQuorum', 'all', 'eachQuorum']);

/** Cassandra connection settings. */
export const CassandraConfig = z.strictObject({
  contactPoints: z.array(z.string().min(1)).min(1),
  localDataCenter: z.string().default('datacenter1'),
  keyspace: Identifier.default('adjunct'),
  autoCreate: z
    .boolean()
    .default(true)
    .describe(
      'create the keyspace when missing (false: a missing keyspace is a KEYSPACE_NOT_FOUND error); catalog and store tables are created when missing either way',
    ),
  replication: z
    .union([
      z.strictObject({ class: z.literal('SimpleStrategy'), replicationFactor: z.number().int().min(1).max(10) }),
      z
        .strictObject({
          class: z.literal('NetworkTopologyStrategy'),
          dataCenters: z
            .record(z.string().regex(/^[A-Za-z0-9_-]+$/), z.number().int().min(1).max(10))
            .refine((dcs) => Object.keys(dcs).length > 0, 'name at least one data center, e.g. { dc1: 3 }')
            .describe('replication factor per data center, e.g. { dc1: 3, dc2: 3 }'),
        })
        .describe('NetworkTopologyStrategy: replicas per data center (production, multi-DC)'),
    ])
    .default({ class: 'SimpleStrategy', replicationFactor: 1 }),
  auth: z.strictObject({ username: z.string(), password: z.string() }).optional(),
  ssl: Tls.optional(),
  readConsistency: Consistency.default('localQuorum'),
  writeConsistency: Consistency.default('localQuorum'),
  requestTimeout: Duration.default(12_000),
  startupTimeout: Duration.default(60_000).describe(
    'how long a starting worker waits for Cassandra to accept connections (retrying with backoff) before it fails with CASSANDRA_UNAVAILABLE',
  ),
  writeBatch: z
    .strictObject({
      maxBytes: z
        .number()
        .int()
        .min(256)
        .max(1 << 20)
        .default(CASSANDRA_BATCH_WARN_BYTES)
        .describe(
          "most bytes per UNLOGGED batch as Cassandra counts them (every row as its own partition); at most Cassandra's batch_size_warn_threshold (5 KiB by default), a batch never makes it log a warning",
        ),
      maxRows: z.number().int().min(1).max(1024).default(64).describe('most rows per batch'),
      linger: Duration.default(2).describe('how long an open batch waits for more rows; 0 turns batching off (one request per row)'),
    })
    .prefault({})
    .describe('coalescing of concurrent row writes into UNLOGGED batches grouped by replica set'),
});

/** Schema registry (Confluent REST API) settings. */
export const RegistryConfig = z.strictObject({
  url: z.string().url(),
  auth: z.strictObject({ username: z.string(), password: z.string() }).optional(),
});
