import { Client } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { Serde, StoreScope } from '../types';
import { CqlExecutor, ExecutionSettings } from './cql-executor';
import { tableNameForStore, validateKeyspaceName, validateTableName } from './identifiers';
import { TableRef } from './layout';
import { SchemaOptions } from './schema';
import { TableOptions } from './table-options';
import { MAX_BUCKETS } from './key-bucket';

/** Validated keyspace and table of a store: the explicit tableName, else the normalised store name. */
export function resolveStoreTable(options: { keyspace: string; storeName?: string; tableName?: string }): {
  keyspace: string;
  table: string;
} {
  const keyspace = validateKeyspaceName(options.keyspace);
  const table = options.tableName !== undefined ? validateTableName(options.tableName) : tableNameForStore(options.storeName);
  return { keyspace, table };
}

/** Throws InvalidArgumentError unless scope is 'partitioned' or 'global'. */
export function requireScope(scope: unknown): StoreScope {
  if (scope !== 'partitioned' && scope !== 'global')
    throw new InvalidArgumentError(`scope must be 'partitioned' or 'global', got ${String(scope)}`);
  return scope;
}

/** Validates the partition for a scope (required int32 ≥ 0 for partitioned, ignored for global). */
export function validatePartition(scope: StoreScope, partition: unknown): number | undefined {
  if (requireScope(scope) === 'global') return undefined;
  if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new InvalidArgumentError(`a partitioned store needs a partition (integer ≥ 0), got ${String(partition)}`);
  }
  return partition;
}

/** An optional positive safe-integer option, or fallback when undefined. */
export function positiveInt(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    throw new InvalidArgumentError(`${name} must be a positive integer, got ${String(v)}`);
  return v;
}

/** Validates a number of buckets (1..4096), or fallback when undefined. */
export function validateBuckets(v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > MAX_BUCKETS)
    throw new InvalidArgumentError(`buckets must be an integer in 1..${MAX_BUCKETS}, got ${String(v)}`);
  return v;
}

/** Options shared by the read-only table readers (openKvTableReader). */
export interface TableReaderOptions extends ExecutionSettings {
  client: Client;
  keyspace: string;
  scope: StoreScope;
  /** Store name (normalised to the table name) or an explicit table name. */
  storeName?: string;
  tableName?: string;
  /**
   * Partitioned tables with `(partition, bucket)` Cassandra partitions: the buckets they were written with (the
   * catalog's `buckets`). Undefined: the table is read as one Cassandra partition per source partition.
   */
  buckets?: number;
}

/** Validates names and scope of a reader's table and builds its executor (no CQL sent). */
export function readerTable(options: TableReaderOptions): { exec: CqlExecutor; ref: TableRef } {
  const { keyspace, table } = resolveStoreTable(options);
  const scope = requireScope(options.scope);
  const ref: TableRef = { keyspace, table, scope };
  if (scope === 'partitioned' && options.buckets !== undefined) ref.buckets = validateBuckets(options.buckets, 0);
  return { exec: new CqlExecutor(options.client, options, { keyspace, table }), ref };
}

/** Options every Cassandra store opener takes: where the table is, its scope, serdes and creation options. */
export interface StoreOpenOptions<K, V> extends ExecutionSettings, SchemaOptions {
  /** Connected driver client (shared; never closed by the store). */
  client: Client;
  keyspace: string;
  /** Store name; the table is its normalised form unless tableName is given. */
  storeName: string;
  tableName?: string;
  scope: StoreScope;
  /** Source partition: required for partitioned scope. */
  partition?: number;
  keySerde?: Serde<K>;
  valueSerde?: Serde<V>;
  /** Table options applied at creation (default compaction LeveledCompactionStrategy). */
  tableOptions?: TableOptions;
  /** Table default_time_to_live in seconds (applied at creation; kv stores only: a versioned store refuses a TTL). */
  defaultTtlSeconds?: number;
}
