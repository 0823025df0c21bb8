import { Client } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { stringSerde } from '../serde/basic-serdes';
import { Serde, StoreScope } from '../types';
import { CassandraKeyValueStore } from './cassandra-kv-store';
import { CqlExecutor, ExecutionSettings } from './cql-executor';
import { tableNameForStore, validateKeyspaceName, validateTableName } from './identifiers';
import { DEFAULT_KV_BUCKETS, KvTableReader } from './kv-table-reader';
import { kvTableDdl } from './layout';
import { validatePartition } from './open-versioned-store';
import { ensureKeyspace, ensureTable, renderReplication, SchemaOptions } from './schema';
import { renderTableOptions, TableOptions } from './table-options';

/** Options of openCassandraKeyValueStore. */
export interface CassandraKvStoreOptions<K, V> extends ExecutionSettings, SchemaOptions {
  client: Client;
  keyspace: string;
  storeName: string;
  tableName?: string;
  scope: StoreScope;
  /** Source partition (required for partitioned scope). */
  partition?: number;
  /** Global scope: buckets spreading keys over Cassandra partitions (default 16; fixed for the table's lifetime). */
  buckets?: number;
  keySerde?: Serde<K>;
  valueSerde?: Serde<V>;
  tableOptions?: TableOptions;
  defaultTtlSeconds?: number;
  /** Allow approximateNumEntries (SELECT COUNT(*)); default false. */
  allowCount?: boolean;
  /** Rows per page of scans (default 500). */
  fetchSize?: number;
}

/** Opens (creating keyspace/table if allowed) a key-value store on Cassandra. */
export async function openCassandraKeyValueStore<K = string, V = string>(
  options: CassandraKvStoreOptions<K, V>,
): Promise<CassandraKeyValueStore<K, V>> {
  const keyspace = validateKeyspaceName(options.keyspace);
  const table = options.tableName !== undefined ? validateTableName(options.tableName) : tableNameForStore(options.storeName);
  const withOptions = renderTableOptions(options.tableOptions, options.defaultTtlSeconds);
  const replication = renderReplication(options.replication);
  const partition = validatePartition(options.scope, options.partition);
  const buckets = options.buckets ?? DEFAULT_KV_BUCKETS;
  if (!Number.isSafeInteger(buckets) || buckets < 1 || buckets > 4096) throw new InvalidArgumentError(`buckets must be in 1..4096, got ${String(buckets)}`);
  const fetchSize = options.fetchSize ?? 500;
  if (!Number.isSafeInteger(fetchSize) || fetchSize < 1) throw new InvalidArgumentError(`fetchSize must be a positive integer, got ${String(fetchSize)}`);

  const exec = new CqlExecutor(options.client, options, { keyspace, table, store: options.storeName });
  const ref = { keyspace, table, scope: options.scope };
  await ensureKeyspace(exec, keyspace, replication, options);
  await ensureTable(exec, ref, kvTableDdl(ref), withOptions, options);
  const valueSerde = options.valueSerde ?? (stringSerde as unknown as Serde<V>);
  const reader = new KvTableReader<K, V>(exec, ref, {
    keySerde: options.keySerde ?? (stringSerde as unknown as Serde<K>),
    valueSerde,
    fetchSize,
    buckets,
    partitions: partition === undefined ? undefined : [partition],
  });
  return new CassandraKeyValueStore<K, V>({ reader, valueSerde, partition, allowCount: options.allowCount === true });
}
