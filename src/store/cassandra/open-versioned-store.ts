import { Client } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { stringSerde } from '../serde/basic-serdes';
import { Serde, StoreScope } from '../types';
import { CassandraVersionedStore } from './cassandra-versioned-store';
import { CqlExecutor, ExecutionSettings } from './cql-executor';
import { tableNameForStore, validateKeyspaceName, validateTableName } from './identifiers';
import { STREAM_TIME_DDL, STREAM_TIME_TABLE, versionedTableDdl } from './layout';
import { ensureKeyspace, ensureTable, renderReplication, SchemaOptions } from './schema';
import { StreamTimeTable } from './stream-time-table';
import { renderTableOptions, TableOptions } from './table-options';
import { VersionedTableReader } from './versioned-table-reader';

/** Options of openCassandraVersionedStore. */
export interface CassandraVersionedStoreOptions<K, V> extends ExecutionSettings, SchemaOptions {
  /** Connected driver client (shared; never closed by the store). */
  client: Client;
  keyspace: string;
  /** Store name; the table is its normalised form unless tableName is given. */
  storeName: string;
  tableName?: string;
  scope: StoreScope;
  /** Source partition: required for partitioned scope; also the default writer identity. */
  partition?: number;
  /** Writer identity for stream time (default `p<partition>`, or `global`). */
  writerId?: string;
  /** History retention (= grace period) in ms. */
  historyRetentionMs: number;
  keySerde?: Serde<K>;
  valueSerde?: Serde<V>;
  /** Table options applied at creation (default compaction LeveledCompactionStrategy). */
  tableOptions?: TableOptions;
  /** Table default_time_to_live in seconds (applied at creation). */
  defaultTtlSeconds?: number;
  /** Retention clean-up of a key every this many puts to it (default 64). */
  cleanupEvery?: number;
  /** Most keys tracked for clean-up (default 10,000). */
  maxDirtyKeys?: number;
  /** Called when a background clean-up fails (it is retried on the next flush). */
  onCleanupError?: (error: unknown) => void;
}

function positiveInt(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new InvalidArgumentError(`${name} must be a positive integer, got ${String(v)}`);
  return v;
}

/** Validates the partition for a scope (required int32 ≥ 0 for partitioned, ignored for global). */
export function validatePartition(scope: StoreScope, partition: unknown): number | undefined {
  if (scope !== 'partitioned' && scope !== 'global') throw new InvalidArgumentError(`scope must be 'partitioned' or 'global', got ${String(scope)}`);
  if (scope === 'global') return undefined;
  if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new InvalidArgumentError(`a partitioned store needs a partition (integer ≥ 0), got ${String(partition)}`);
  }
  return partition;
}

/** Opens (creating keyspace/tables if allowed) a KIP-889 versioned store on Cassandra and loads its stream time. */
export async function openCassandraVersionedStore<K = string, V = string>(
  options: CassandraVersionedStoreOptions<K, V>,
): Promise<CassandraVersionedStore<K, V>> {
  // Everything is validated before any CQL is built or sent.
  const keyspace = validateKeyspaceName(options.keyspace);
  const table = options.tableName !== undefined ? validateTableName(options.tableName) : tableNameForStore(options.storeName);
  const withOptions = renderTableOptions(options.tableOptions, options.defaultTtlSeconds);
  const replication = renderReplication(options.replication);
  const partition = validatePartition(options.scope, options.partition);
  const r = options.historyRetentionMs;
  if (typeof r !== 'number' || !Number.isSafeInteger(r) || r < 0) {
    throw new InvalidArgumentError(`historyRetentionMs must be a non-negative safe integer, got ${String(r)}`);
  }
  const writerId = options.writerId ?? (partition === undefined ? 'global' : `p${partition}`);
  if (typeof writerId !== 'string' || writerId.length === 0 || writerId.length > 200) {
    throw new InvalidArgumentError(`writerId must be a non-empty string, got ${String(writerId)}`);
  }
  const cleanupEvery = positiveInt('cleanupEvery', options.cleanupEvery, 64);
  const maxDirtyKeys = positiveInt('maxDirtyKeys', options.maxDirtyKeys, 10_000);

  const exec = new CqlExecutor(options.client, options, { keyspace, table, store: options.storeName });
  const ref = { keyspace, table, scope: options.scope };
  await ensureKeyspace(exec, keyspace, replication, options);
  await ensureTable(exec, { keyspace, table: STREAM_TIME_TABLE }, STREAM_TIME_DDL, [], options);
  await ensureTable(exec, ref, versionedTableDdl(ref), withOptions, options);

  const streamTimes = new StreamTimeTable(exec, keyspace);
  const initialStreamTime = await streamTimes.load(table, writerId);
  return new CassandraVersionedStore<K, V>({
    reader: new VersionedTableReader(exec, ref),
    streamTimes,
    storeId: table,
    writerId,
    partition,
    historyRetentionMs: r,
    keySerde: options.keySerde ?? (stringSerde as unknown as Serde<K>),
    valueSerde: options.valueSerde ?? (stringSerde as unknown as Serde<V>),
    initialStreamTime,
    cleaner: { every: cleanupEvery, maxDirtyKeys, concurrency: 4, maxQueued: maxDirtyKeys, onError: options.onCleanupError },
  });
}
