import { stringSerde } from '../serde/basic-serdes';
import { Serde } from '../types';
import { CassandraKeyValueStore } from './cassandra-kv-store';
import { CqlExecutor } from './cql-executor';
import { KvTableReader } from './kv-table-reader';
import { defaultBuckets } from './key-bucket';
import { kvTableDdl, TableRef } from './layout';
import { positiveInt, resolveStoreTable, StoreOpenOptions, validateBuckets, validatePartition } from './open-common';
import { ensureKeyspace, ensureTable, partitionedTableBuckets, renderReplication, tableColumns } from './schema';
import { prepareTableOptions } from './table-options';

/** Options of openCassandraKeyValueStore. */
export interface CassandraKvStoreOptions<K, V> extends StoreOpenOptions<K, V> {
  /**
   * Buckets spreading keys over Cassandra partitions, fixed for the table's lifetime: global scope (default 16), or
   * per source partition in partitioned scope (default 64; an existing table keeps its layout, bucketed or not).
   */
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
  const tableOptions = prepareTableOptions(options.tableOptions, options.defaultTtlSeconds); // validated before any CQL
  const replication = renderReplication(options.replication);
  const partition = validatePartition(options.scope, options.partition);
  const buckets = validateBuckets(options.buckets, defaultBuckets(options.scope));
  const fetchSize = positiveInt('fetchSize', options.fetchSize, 500);

  const exec = new CqlExecutor(options.client, options, { keyspace, table, store: options.storeName });
  const partitioned = options.scope === 'partitioned';
  const wanted: TableRef = { keyspace, table, scope: options.scope, buckets: partitioned ? buckets : undefined };
  await ensureKeyspace(exec, keyspace, replication, options);
  // The default compaction depends on the nodes' version, known once the client is connected.
  const withOptions = tableOptions.render(options.client);
  await ensureTable(exec, wanted, kvTableDdl(wanted), withOptions, options);
  // An existing partitioned table keeps the layout it was created with.
  const ref = partitioned
    ? { ...wanted, buckets: partitionedTableBuckets(wanted, await tableColumns(exec, wanted, 'read partition key'), buckets) }
    : wanted;
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
