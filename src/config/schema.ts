import { z } from 'zod';
import { CassandraConfig, KafkaConfig, RegistryConfig } from './connections';
import { ByteSize, Duration, Name } from './primitives';

export * from './primitives';
export * from './connections';

/** Worker-wide settings. */
export const WorkerConfig = z
  .strictObject({
    groupId: z.string().min(1).default('adjunct'),
    maxInFlight: z
      .number()
      .int()
      .min(1)
      .max(4096)
      .default(64)
      .describe(
        'most Cassandra write requests (batches) in flight per pipeline; records in flight per worker are bounded at 2 × maxInFlight × cassandra.writeBatch.maxRows, and their bytes at maxInFlightBytes (full batches in flight, as many staged for grouping)',
      ),
    maxInFlightBytes: ByteSize.optional().describe(
      'bound on the key+value bytes of in-flight writes per worker (a larger record is written alone); default 3 × maxInFlight × cassandra.writeBatch.maxBytes with write batching (about two rounds of full batches), else 16 MiB',
    ),
    partitionsConsumedConcurrently: z.number().int().min(1).max(256).default(8),
    commitInterval: Duration.default(1_000),
    shutdownTimeout: Duration.default(30_000),
    generationPoll: Duration.default(2_000).describe(
      'how often every worker re-reads the catalog to follow reloads, switches, rollbacks and pauses started anywhere (the bound on how long they take to reach every worker)',
    ),
    pipelineFailure: z
      .enum(['exit', 'isolate'])
      .default('exit')
      .describe(
        'a FAILED pipeline stops the worker (exit, the CLI exits 1), or only itself (isolate: the others keep running, /readyz is 503, POST /pipelines/:name/restart restarts it)',
      ),
    logLevel: z
      .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      .optional()
      .describe('log level (default info); ADJUNCT_LOG_LEVEL and --log-level override it'),
    http: z
      .strictObject({
        enabled: z.boolean().default(true),
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        adminToken: z
          .preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional())
          .optional()
          .describe('bearer token required by admin routes when not bound to loopback (at least 16 characters; an empty value means none)'),
        readToken: z
          .preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional())
          .optional()
          .describe(
            'optional bearer token required by every read route except /healthz (at least 16 characters; the admin token is accepted too)',
          ),
        tls: z
          .strictObject({
            keyFile: z.string().min(1).describe('PEM private key file'),
            certFile: z.string().min(1).describe('PEM certificate (chain) file'),
          })
          .optional()
          .describe('serve HTTPS with this key and certificate'),
        requestTimeout: Duration.default(30_000).describe('a request must be received completely within this time (Node requestTimeout)'),
        connectionTimeout: Duration.default(60_000).describe('an idle socket is closed after this time (fastify connectionTimeout)'),
        keepAliveTimeout: Duration.default(5_000).describe('how long an idle keep-alive connection stays open'),
        maxReplyBytes: z
          .number()
          .int()
          .min(1024)
          .max(64 * 1024 * 1024)
          .default(1024 * 1024)
          .describe('byte cap of a history reply: versions beyond it go to the next page (at least one version per page)'),
      })
      .prefault({}),
  })
  .prefault({});

/** Converter of record key or value bytes; `avro`, `json-schema` and `protobuf` read the Confluent wire format through the registry. */
export const Converter = z.enum(['string', 'json', 'avro', 'json-schema', 'protobuf', 'bytes']);

/** Kafka topic name. */
const TopicName = z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'invalid Kafka topic name');

/** A regular expression that must match a whole topic name (like Kafka Connect's `topics.regex`). */
export const TopicPattern = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    try {
      new RegExp(v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: `invalid regular expression: ${(e as Error).message}` });
    }
  });

/** Where an extracted field comes from. */
const Source = z.enum(['key', 'value']);

/** How the store key is extracted. */
export const KeyExtract = z.strictObject({
  from: Source.default('key'),
  path: z.string().optional().describe('field path, e.g. payload.after.id or items[0].sku; whole key/value when absent'),
  fields: z.array(z.string().min(1)).min(1).optional().describe('composite key: field paths encoded in order-preserving tuple form'),
});

/** How the store value is extracted. */
export const ValueExtract = z.strictObject({
  from: Source.default('value'),
  path: z.string().optional(),
  project: z.array(z.string().min(1)).min(1).optional().describe('keep only these field paths'),
});

/** Where the version timestamp comes from. */
export const TimestampExtract = z.strictObject({
  from: z.enum(['record', 'field', 'header']).default('record'),
  path: z.string().optional().describe('value field path when from=field'),
  header: z.string().optional().describe('header name when from=header'),
  format: z.enum(['millis', 'seconds', 'micros', 'iso']).default('millis'),
  onMissing: z
    .enum(['streamTime', 'record', 'fail'])
    .default('streamTime')
    .describe(
      "from=field|header: timestamp of a tombstone that has no such field/header. streamTime = the partition's current stream time (the record timestamp before the first version), so it never moves stream time; record = the Kafka record timestamp; fail = an extraction error (tolerance/DLQ). Value records without it are always extraction errors.",
    ),
});

/** A filter predicate: keep records where the field at `path` matches. */
export const FilterExtract = z.strictObject({
  path: z.string().min(1),
  from: Source.default('value'),
  equals: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
  notEquals: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
  in: z.array(z.union([z.string(), z.number(), z.boolean()])).optional(),
  exists: z.boolean().optional(),
});

/** Extractor configuration: a preset, built-in field extraction, or a custom module. */
export const ExtractConfig = z
  .strictObject({
    preset: z.enum(['none', 'debezium']).default('none'),
    key: KeyExtract.optional(),
    value: ValueExtract.optional(),
    timestamp: TimestampExtract.optional(),
    filter: z.array(FilterExtract).optional(),
    module: z.string().optional().describe('path (relative to the config file) of a JS/TS module exporting an extractor'),
    options: z.record(z.string(), z.unknown()).optional().describe('options passed to the custom extractor factory'),
  })
  .prefault({});

/** Table options, validated again strictly by the store before any CQL is built. */
export const TableOptions = z.record(z.string(), z.unknown());

/** Target store of a pipeline. */
export const StoreConfig = z.strictObject({
  name: Name,
  kind: z.enum(['versioned', 'kv']).default('versioned'),
  scope: z.enum(['partitioned', 'global']).default('global'),
  historyRetention: Duration.default(86_400_000).describe('versioned stores: how long old versions are kept (also the grace period)'),
  keySerde: z.enum(['string', 'json', 'int64', 'tuple', 'buffer']).optional().describe('default: tuple for composite keys, else string'),
  valueSerde: z.enum(['string', 'json', 'buffer']).default('json'),
  tableOptions: TableOptions.optional(),
  ttlSeconds: z.number().int().min(0).max(630_720_000).optional(),
  cleanupEvery: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe(
      'deprecated, no effect: expired versions are removed by blind range deletes, about one per key per retention period (README "Retention clean-up")',
    ),
  buckets: z
    .number()
    .int()
    .min(1)
    .max(4096)
    .optional()
    .describe(
      'partitioned scope: key-hash buckets per source partition, so a Cassandra partition holds 1/buckets of a Kafka partition (default 64); kv global scope: buckets of the table (default 16). Fixed per store once recorded in the catalog',
    ),
  layout: z
    .enum(['rows', 'edges'])
    .default('rows')
    .describe(
      "versioned global stores: table layout of new generations. rows: each version clustered by its own time (as-of get with validTo: two reads). edges: clustered by its predecessor's time (one read; writes keep recent version times per key). An existing table keeps its layout; a reload converts",
    ),
  typed: z
    .boolean()
    .default(false)
    .describe(
      'versioned stores: also write the top-level scalar fields of the value schema (registry value converter) as typed CQL columns, for plain-CQL readers; new schema fields add columns',
    ),
  columns: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'versioned stores: explicit typed columns {valueField: cqlType}, e.g. {rate: decimal, source: text}; the column is the field name in snake_case',
    ),
  keyColumns: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'versioned stores: typed key columns key_<name>, e.g. {currency: text}; one entry for a scalar key, or entries named after extract.key.fields for a composite key',
    ),
});

/** Error handling of a pipeline (Kafka Connect style). */
export const ErrorsConfig = z
  .strictObject({
    tolerance: z.enum(['none', 'all']).default('none'),
    retryTimeout: Duration.default(300_000),
    retryMaxDelay: Duration.default(30_000),
    stallTimeout: Duration.optional().describe(
      'fail the pipeline when a dependency stays unavailable this long (default: stall and retry for ever); never dead-letters',
    ),
    deadLetterQueue: z
      .strictObject({
        topic: z.string().min(1),
        contextHeaders: z.boolean().default(true),
        partitions: z.number().int().min(1).max(10_000).default(1).describe('partitions of the DLQ topic when adjunct creates it'),
        replicationFactor: z
          .number()
          .int()
          .min(-1)
          .max(32)
          .refine((n) => n !== 0, 'use -1 (broker default) or a positive number')
          .default(-1)
          .describe('replication factor of the DLQ topic when adjunct creates it; -1: the broker default'),
      })
      .optional(),
  })
  .prefault({});

/** One pipeline: changelog topic(s) → converters → extractors → store. */
export const PipelineConfig = z.strictObject({
  name: Name,
  topics: z.array(TopicName).min(1).optional().describe('changelog topics to consume; exactly one of topics or topicPattern'),
  topicPattern: TopicPattern.optional().describe(
    'regex matched against whole topic names (Kafka Connect topics.regex); matching topics created later are picked up',
  ),
  topicRefreshInterval: Duration.default(30_000).describe(
    'how often the topic list is re-read (default 30s): with topicPattern to pick up new or deleted matching topics, with topics to report a deleted one',
  ),
  keyConverter: Converter.default('string'),
  valueConverter: Converter.default('json'),
  extract: ExtractConfig,
  store: StoreConfig,
  bootstrap: z.boolean().default(false),
  dependsOn: z.array(Name).default([]),
  resetOffset: z.boolean().default(false),
  onOffsetOutOfRange: z.enum(['reload', 'fail', 'latest']).default('reload'),
  keepPreviousGeneration: Duration.default(86_400_000),
  errors: ErrorsConfig,
});

/** The whole adjunct YAML file. */
export const AdjunctConfigSchema = z.strictObject({
  kafka: KafkaConfig,
  cassandra: CassandraConfig,
  registry: RegistryConfig.optional(),
  worker: WorkerConfig,
  pipelines: z.array(PipelineConfig).min(1),
});

/**
 * What the read commands (`lookup`, `serve`, `status -c`) need: `cassandra`, optionally `worker` (HTTP settings) and the
 * pipelines' names and bootstrap flags. A full worker config is accepted as is; a config holding only `cassandra` too.
 */
export const ReadConfigSchema = z.strictObject({
  kafka: z.unknown().optional(),
  cassandra: CassandraConfig,
  registry: z.unknown().optional(),
  worker: WorkerConfig,
  pipelines: z.array(z.looseObject({ name: Name, bootstrap: z.boolean().default(false) })).default([]),
});

/** Validated read-only configuration. */
export type ReadConfig = z.output<typeof ReadConfigSchema>;

/** Validated configuration (after defaults). */
export type AdjunctConfig = z.output<typeof AdjunctConfigSchema>;
/** One validated pipeline. */
export type PipelineSpec = z.output<typeof PipelineConfig>;
/** Validated extractor settings. */
export type ExtractSpec = z.output<typeof ExtractConfig>;
/** Validated store settings. */
export type StoreSpec = z.output<typeof StoreConfig>;
