import { InvalidArgumentError } from '../../errors';
import { stringSerde } from '../serde/basic-serdes';
import { Serde } from '../types';
import { CassandraKeyValueStore } from './cassandra-kv-store';
import { CqlExecutor } from './cql-executor';
import { DEFAULT_KV_BUCKETS, KvTableReader } from './kv-table-reader';
import { kvTableDdl } from './layout';
import { positiveInt, resolveStoreTable, StoreOpenOptions, validatePartition } from './open-common';
import { ensureKeyspace, ensureTable, renderReplication } from './schema';
import { renderTableOptions } from './table-options';

/** Options of openCassandraKeyValueStore. */
export interface CassandraKvStoreOptions<K, V> extends StoreOpenOptions<K, V> {
  /** Global scope: buckets spreading keys over Cassandra partitions (default 16; fixed for the table's lifetime). */
  buckets?: number;
  /** Allow approximateNumEntries (SELECT COUNT(*)); default false. */
  allowCount?: boolean;
  /** Rows per page of scans (default 500). */
  fetchSize?: number;
}

/** Opens (creating keyspace/table if allowed) a key-value store on Cassandra. */
export async function openCassandraKeyValueStore<K = string, V = string>(
  options: CassandraKvStoreOptions<K, V>,
): Promise<CassandraKeyValueStore<K, V>> {
  const { keyspace, table } = resolveStoreTable(options);
  const withOptions = renderTableOptions(options.tableOptions, options.defaultTtlSeconds);
  const replication = renderReplication(options.replication);
  const partition = validatePartition(options.scope, options.partition);
  const buckets = options.buckets ?? DEFAULT_KV_BUCKETS;
  if (!Number.isSafeInteger(buckets) || buckets < 1 || buckets > 4096)
    throw new InvalidArgumentError(`buckets must be in 1..4096, got ${String(buckets)}`);
  const fetchSize = positiveInt('fetchSize', options.fetchSize, 500);

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
