import { Client } from 'cassandra-driver';
import type { AdjunctConfig, PipelineSpec } from '../config/schema';
import { requireSchemaAgreement } from '../catalog';
import { GenerationFields, generationTable, StoreEntry } from '../generations';
import { AdjunctError, InvalidArgumentError, wrapCassandraError } from '../errors';
import { coerceKey, coerceValue, serdeByName } from '../store/serde';
import { Serde } from '../store/types';
import { baseTableForStore, validateKeyspaceName, validateTableName } from '../store/cassandra';
import { ensureKeyspace, renderReplication, ReplicationOptions, tableExistsAgreed } from '../store/cassandra';
import { CqlExecutor, StoreRetryPolicy } from '../store/cassandra';
import { openCassandraVersionedStore } from '../store/cassandra';
import { openCassandraKeyValueStore } from '../store/cassandra';
import { defaultBuckets } from '../store/cassandra';
import { PartitionWriterFactory } from '../sink/partition-writer';
import { TableOptions } from '../store/cassandra';
import { explicitKeyColumns, explicitTypedColumns } from '../store/cassandra';
import { TypedColumnsOptions } from '../store/cassandra';
import { RegistryColumnSource, RegistrySettings, UNPARSED_VALUE } from '../converters';
import { writerIdOf } from '../kafka/topic-partition';
import { createWriteBatcher } from '../store/cassandra';
import { WriteBatcher } from '../store/cassandra';

/**
 * Rows in flight the write budget allows with batching: maxInFlight full batches in flight and as many again staged
 * behind them. The batcher groups each partition's rows from that queue, so a deeper queue means more rows per
 * Cassandra mutation (measured: Cassandra CPU per record −7% against one round, worker CPU unchanged; four rounds
 * cost the worker more in GC than Cassandra saved).
 */
export const BATCH_ROUNDS_IN_FLIGHT = 2;

/** A value checked but not built reached a writer that would serialise it: a wiring bug, never written as `{}`. */
function unparsedWithoutBytes(pipeline: string): AdjunctError {
  return new AdjunctError(`pipeline ${pipeline}: an unparsed value reached a store that does not write record bytes`, {
    code: 'INTERNAL',
    stage: 'store',
    retriable: false,
  });
}

/** Records the write budget allows: BATCH_ROUNDS_IN_FLIGHT × maxInFlight × maxRows with batching, else maxInFlight. */
export function recordsInFlight(cfg: AdjunctConfig): number {
  const b = cfg.cassandra.writeBatch;
  return b.linger > 0 ? BATCH_ROUNDS_IN_FLIGHT * cfg.worker.maxInFlight * b.maxRows : cfg.worker.maxInFlight;
}

/** Key + value bytes without write batching when worker.maxInFlightBytes is not set. */
export const UNBATCHED_BYTES_IN_FLIGHT = 16 << 20;

/**
 * Batches' worth of key + value bytes the write budget allows by default: a batch's bytes as Cassandra counts them
 * exceed its rows' key + value bytes by each row's clustering and cell overhead (≈ 45% for 210-byte records), so three
 * of these are about two rounds of full batches (BATCH_ROUNDS_IN_FLIGHT).
 */
export const BATCH_BYTE_ROUNDS_IN_FLIGHT = 3;

/**
 * Key + value bytes the write budget allows: worker.maxInFlightBytes when set, else BATCH_BYTE_ROUNDS_IN_FLIGHT ×
 * maxInFlight × writeBatch.maxBytes with batching. Batches are cut by bytes long before maxRows for most rows, so the
 * count bound alone let a queue of several rounds form, and rows that wait that long outlive the young generation:
 * the collector copies and promotes them (bench, 500k records of 210 B, pinned, 3 runs each: 8,192 records in flight
 * at 16.6 per batch gave 15.0 µs of worker CPU per record, this bound 13.7, at the same rate and Cassandra CPU).
 */
export function bytesInFlight(cfg: AdjunctConfig): number {
  const b = cfg.cassandra.writeBatch;
  if (cfg.worker.maxInFlightBytes !== undefined) return cfg.worker.maxInFlightBytes;
  return b.linger > 0 ? BATCH_BYTE_ROUNDS_IN_FLIGHT * cfg.worker.maxInFlight * b.maxBytes : UNBATCHED_BYTES_IN_FLIGHT;
}

/** Replication options of the config in the store layer's shape. */
export function replicationOf(cfg: AdjunctConfig['cassandra']): ReplicationOptions {
  return cfg.replication.class === 'SimpleStrategy'
    ? { class: 'SimpleStrategy', replicationFactor: cfg.replication.replicationFactor }
    : { class: 'NetworkTopologyStrategy', datacenters: cfg.replication.dataCenters };
}

/** Creates the configured keyspace if allowed (validated first), else checks that it exists. */
export async function ensureKeyspaceFor(client: Client, cfg: AdjunctConfig['cassandra']): Promise<void> {
  const ks = validateKeyspaceName(cfg.keyspace);
  const exec = new CqlExecutor(client, {}, { keyspace: ks });
  await ensureKeyspace(exec, ks, renderReplication(replicationOf(cfg)), { autoCreate: cfg.autoCreate, replication: replicationOf(cfg) });
}

/** The key serde name a pipeline uses: explicit, or tuple for composite keys, else string. */
export function keySerdeName(spec: PipelineSpec): string {
  return spec.store.keySerde ?? (spec.extract.key?.fields ? 'tuple' : 'string');
}

/**
 * The buckets a store's config asks for: `store.buckets`, else 16 for kv global stores and 64 per source partition
 * for partitioned stores; null for versioned global stores (one Cassandra partition per key).
 */
export function configuredBuckets(spec: PipelineSpec): number | null {
  const s = spec.store;
  if (s.kind === 'versioned' && s.scope === 'global') return null;
  return s.buckets ?? defaultBuckets(s.scope);
}

/** A single record moved a writer's stream time forward by more than the history retention (every older version expires). */
export interface StreamTimeJump {
  topic: string;
  partition: number;
  from: number;
  to: number;
  historyRetentionMs: number;
}

/** Connects a pipeline's store config to Cassandra tables: catalog entry, per-generation tables and partition writers. */
export class StoreWiring {
  private base: string;
  private readonly keySerde: Serde<unknown>;
  private readonly valueSerde: Serde<unknown>;
  private readonly keySerdeName: string;
  /** Key-hash buckets of the store's tables (the catalog's once registered); null for versioned global stores. */
  private buckets: number | null;
  /** Coalesces the row writes of every partition and generation of this pipeline. */
  private readonly batcher: WriteBatcher;

  constructor(
    private readonly client: Client,
    private readonly cfg: AdjunctConfig['cassandra'],
    private readonly spec: PipelineSpec,
    private readonly retry?: StoreRetryPolicy,
    private readonly onStreamTimeJump?: (jump: StreamTimeJump) => void,
    maxInFlight = 64,
    private readonly registry?: RegistrySettings,
    onRequestDone?: (seconds: number) => void,
  ) {
    this.base = baseTableForStore(spec.store.name);
    this.keySerdeName = keySerdeName(spec);
    this.keySerde = serdeByName(this.keySerdeName);
    this.valueSerde = serdeByName(spec.store.valueSerde);
    this.buckets = configuredBuckets(spec);
    // Every row write of the pipeline goes through one batcher (linger 0: each row is sent on its own).
    const b = cfg.writeBatch;
    const ks = validateKeyspaceName(cfg.keyspace);
    const exec = new CqlExecutor(client, { writeConsistency: cfg.writeConsistency, retry }, { keyspace: ks, store: spec.store.name });
    this.batcher = createWriteBatcher(exec, ks, {
      maxBytes: b.maxBytes,
      maxRows: b.maxRows,
      lingerMs: b.linger,
      maxConcurrent: maxInFlight,
      onRequestDone,
    });
  }

  /** Base table of the store's generation tables (`<base>_g<N>`). */
  get baseTable(): string {
    return this.base;
  }

  /** Uses the base table the catalog already records for this store (stores created before long names were hashed). */
  adoptBaseTable(baseTable: string): void {
    this.base = validateTableName(baseTable);
  }

  /**
   * Uses the buckets the catalog records for this store, so every worker writes (and every reader reads) a table with
   * the number it was created with, whatever each one's config says. Null (an entry from before buckets) keeps the config's.
   */
  adoptBuckets(buckets: number | null): void {
    if (buckets !== null) this.buckets = buckets;
  }

  /** The catalog entry describing this store. */
  catalogEntry(): Omit<StoreEntry, GenerationFields> {
    return {
      store: this.spec.store.name,
      kind: this.spec.store.kind,
      scope: this.spec.store.scope,
      keySerde: this.keySerdeName,
      valueSerde: this.spec.store.valueSerde,
      baseTable: this.baseTable,
      historyRetentionMs: this.spec.store.historyRetention,
      buckets: this.buckets,
    };
  }

  private common(generation: number) {
    return {
      client: this.client,
      keyspace: this.cfg.keyspace,
      storeName: this.spec.store.name,
      tableName: generationTable(this.baseTable, generation),
      scope: this.spec.store.scope,
      keySerde: this.keySerde,
      valueSerde: this.valueSerde,
      tableOptions: this.spec.store.tableOptions as TableOptions | undefined,
      defaultTtlSeconds: this.spec.store.ttlSeconds,
      autoCreate: this.cfg.autoCreate,
      replication: replicationOf(this.cfg),
      readConsistency: this.cfg.readConsistency,
      writeConsistency: this.cfg.writeConsistency,
      retry: this.retry,
      batcher: this.batcher,
    };
  }

  /**
   * Typed columns of the writer of one topic: the explicit mapping, or the latest value schema of the topic's subject
   * (`<topic>-value`), restricted to the projected fields; plus the explicit key columns. Undefined when the store is not typed.
   */
  private typedColumns(topic: string): TypedColumnsOptions | undefined {
    const s = this.spec.store;
    const keyColumns = s.keyColumns === undefined ? undefined : explicitKeyColumns(s.keyColumns, this.spec.extract.key?.fields);
    if (!s.typed)
      return s.columns === undefined && keyColumns === undefined
        ? undefined
        : { columns: explicitTypedColumns(s.columns ?? {}), keyColumns };
    if (!this.registry) throw new InvalidArgumentError('typed: true needs a schema registry');
    const project = this.spec.extract.value?.project?.map((f) => f.split(/[.[]/)[0]);
    return { source: new RegistryColumnSource(this.registry, `${topic}-value`, project), keyColumns };
  }

  /** Creates the table of a generation (validated options; waits for schema agreement). */
  async ensureTable(generation: number): Promise<void> {
    // Any writer identity creates the table; typed columns are added by each topic's writers (a pattern has no topic yet).
    const w = await this.writerFactory(generation, { withTyped: false }).open(this.spec.topics?.[0] ?? this.spec.name, 0);
    await w.close();
  }

  /** True when the table of a generation exists, as the nodes agree (`tableExistsAgreed`: a disagreement is an error, never "missing"). */
  tableExists(generation: number): Promise<boolean> {
    const ks = validateKeyspaceName(this.cfg.keyspace);
    const exec = new CqlExecutor(this.client, {}, { keyspace: ks, store: this.spec.store.name });
    return tableExistsAgreed(exec, ks, generationTable(this.baseTable, generation));
  }

  /** Drops the table of a generation (after its keep time). */
  async dropTable(generation: number): Promise<void> {
    const t = generationTable(this.baseTable, generation);
    try {
      await this.client.execute(`DROP TABLE IF EXISTS ${validateKeyspaceName(this.cfg.keyspace)}.${t}`);
    } catch (e) {
      throw wrapCassandraError(e, `dropping table ${t}`, 'schema');
    }
    await requireSchemaAgreement(this.client, `dropping table ${t}`);
  }

  /** The value converter's format is the store's value serde: a record's bytes are its serialised value. */
  private get sameValueFormat(): boolean {
    const vSerde = this.spec.store.valueSerde;
    return this.spec.valueConverter === vSerde && (vSerde === 'json' || vSerde === 'string');
  }

  /** True when a string key's record bytes may be written as they are (a versioned store whose key serde is `string`). */
  get keepsKeyBytes(): boolean {
    return this.spec.store.kind === 'versioned' && this.keySerdeName === 'string';
  }

  /**
   * True when every value this store writes whole is written as the record's own bytes (a versioned store in the value
   * converter's format, without typed columns, which read the value): the sink may then check values without building them.
   */
  get keepsValueBytes(): boolean {
    const s = this.spec.store;
    return s.kind === 'versioned' && this.sameValueFormat && !s.typed && s.columns === undefined && s.keyColumns === undefined;
  }

  /**
   * Writers into the table of one generation: with the store's typed columns unless `withTyped` is false; when
   * `tableMustExist` (every task's writers), a missing table is TABLE_MISSING instead of being created (only ensureTable creates).
   */
  writerFactory(generation: number, o: { withTyped?: boolean; tableMustExist?: boolean } = {}): PartitionWriterFactory {
    const withTyped = o.withTyped ?? true;
    return {
      open: async (topic: string, partition: number) => {
        const writerId = writerIdOf(topic, partition);
        const common = { ...this.common(generation), partition, writerId, tableMustExist: o.tableMustExist ?? false };
        const kSerde = this.keySerdeName;
        const vSerde = this.spec.store.valueSerde;
        const sameFormat = this.sameValueFormat;
        if (this.spec.store.kind === 'versioned') {
          const retention = this.spec.store.historyRetention;
          const store = await openCassandraVersionedStore<unknown, unknown>({
            ...common,
            historyRetentionMs: retention,
            typed: withTyped ? this.typedColumns(topic) : undefined,
            buckets: this.buckets ?? undefined,
            layout: this.spec.store.layout,
          });
          return {
            observedStreamTime: () => store.observedStreamTime(),
            write: (key, value, ts, listener, valueBytes, keyBytes) => {
              const before = store.observedStreamTime();
              const bytes = sameFormat ? valueBytes : undefined;
              if (value === UNPARSED_VALUE && bytes === undefined) throw unparsedWithoutBytes(this.spec.name);
              const kBytes = kSerde === 'string' && typeof key === 'string' ? keyBytes : undefined;
              const outcome = store.issue(coerceKey(kSerde, key), coerceValue(vSerde, value), ts, listener, bytes, kBytes);
              const after = store.observedStreamTime();
              if (Number.isFinite(before) && after - before > retention)
                this.onStreamTimeJump?.({ topic, partition, from: before, to: after, historyRetentionMs: retention });
              return outcome;
            },
            flush: (observedStreamTime) => store.flush(observedStreamTime),
            // No flush on close: it would persist the live stream time, ahead of the last committed offset.
            close: async () => undefined,
          };
        }
        const store = await openCassandraKeyValueStore<unknown, unknown>({ ...common, buckets: this.buckets ?? undefined });
        return {
          observedStreamTime: () => Number.NEGATIVE_INFINITY,
          write: (key, value, _ts, listener) => {
            if (value === undefined) throw new InvalidArgumentError('value is undefined');
            store.put(coerceKey(kSerde, key), coerceValue(vSerde, value)).then(
              () => listener.rowWritten(),
              (e: unknown) => listener.rowFailed(e),
            );
            return 'issued';
          },
          flush: async () => undefined,
          close: () => store.close(),
        };
      },
    };
  }
}
