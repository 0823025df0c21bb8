import { InvalidArgumentError } from '../../errors';
import { stringSerde } from '../serde/basic-serdes';
import { Serde } from '../types';
import { CassandraVersionedStore } from './cassandra-versioned-store';
import { CqlExecutor } from './cql-executor';
import {
  STREAM_TIME_DDL,
  STREAM_TIME_TABLE,
  VERSIONED_ADDED_COLUMNS,
  VERSIONED_LAYOUTS,
  VersionedLayout,
  versionedTableDdl,
} from './layout';
import { EdgeTableReader } from './edge-table-reader';
import { DEFAULT_EDGE_KEYS, EdgeWriter } from './edge-writer';
import { positiveInt, resolveStoreTable, StoreOpenOptions, validateBuckets, validatePartition } from './open-common';
import { ensureColumns, ensureKeyspace, ensureTable, partitionedTableBuckets, renderReplication, tableColumns } from './schema';
import { DEFAULT_PARTITION_BUCKETS } from './key-bucket';
import { StreamTimeTable } from './stream-time-table';
import { prepareTableOptions, versionedTtlOption, VERSIONED_TTL_MESSAGE } from './table-options';
import { VersionedTableReader } from './versioned-table-reader';
import { TypedColumns, TypedColumnsOptions } from './typed-columns';
import { requireValidColumns } from './typed-column-spec';

/** Options of openCassandraVersionedStore (the partition is also the default writer identity). */
export interface CassandraVersionedStoreOptions<K, V> extends StoreOpenOptions<K, V> {
  /** Writer identity for stream time (default `p<partition>`, or `global`). */
  writerId?: string;
  /** History retention (= grace period) in ms. */
  historyRetentionMs: number;
  /** Most keys tracked for clean-up (default 10,000). */
  maxDirtyKeys?: number;
  /** Called when a background clean-up fails (it is retried on the next flush). */
  onCleanupError?: (error: unknown) => void;
  /** Typed columns for plain-CQL readers, written alongside the layout's columns (opt-in; validated before any CQL). */
  typed?: TypedColumnsOptions;
  /**
   * Partitioned scope: key-hash buckets per source partition of a table this call creates (default 64; every writer
   * and reader of the table must use the same number). An existing table keeps its layout (bucketed or not).
   */
  buckets?: number;
  /**
   * Layout of a table this call creates (default `rows`): `edges` clusters each version by its predecessor's time, so an
   * as-of get with its validTo is one read (global scope, without typed columns). An existing table keeps its layout.
   */
  layout?: VersionedLayout;
  /** Edge layout: most keys whose newest version times this writer keeps (default 20,000; a key not kept costs a read). */
  edgeKeys?: number;
}

/** The layout asked for, validated: edges only for global tables without typed columns. */
function requestedLayout(options: { layout?: unknown; scope: string; typed?: unknown }): VersionedLayout {
  const layout = options.layout ?? 'rows';
  if (!VERSIONED_LAYOUTS.includes(layout as VersionedLayout)) {
    throw new InvalidArgumentError(`layout must be one of ${VERSIONED_LAYOUTS.join(', ')}, got ${String(layout)}`);
  }
  if (layout === 'edges' && options.scope !== 'global') throw new InvalidArgumentError('layout edges applies to global scope only');
  if (layout === 'edges' && options.typed !== undefined) throw new InvalidArgumentError('layout edges does not take typed columns');
  return layout as VersionedLayout;
}

/** Opens (creating keyspace/tables if allowed) a KIP-889 versioned store on Cassandra and loads its stream time. */
export async function openCassandraVersionedStore<K = string, V = string>(
  options: CassandraVersionedStoreOptions<K, V>,
): Promise<CassandraVersionedStore<K, V>> {
  // Everything is validated before any CQL is built or sent.
  const { keyspace, table } = resolveStoreTable(options);
  if (versionedTtlOption(options.tableOptions, options.defaultTtlSeconds) !== null) throw new InvalidArgumentError(VERSIONED_TTL_MESSAGE);
  const tableOptions = prepareTableOptions(options.tableOptions); // validated before any CQL
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
  const buckets = validateBuckets(options.buckets, DEFAULT_PARTITION_BUCKETS);
  const maxDirtyKeys = positiveInt('maxDirtyKeys', options.maxDirtyKeys, 10_000);
  const layout = requestedLayout(options);
  const edgeKeys = positiveInt('edgeKeys', options.edgeKeys, DEFAULT_EDGE_KEYS);
  if (options.typed !== undefined) {
    const value = 'columns' in options.typed ? options.typed.columns : [];
    requireValidColumns([...(options.typed.keyColumns ?? []), ...value], 'typed columns');
  }

  const exec = new CqlExecutor(options.client, options, { keyspace, table, store: options.storeName });
  const wanted = {
    keyspace,
    table,
    scope: options.scope,
    buckets: options.scope === 'partitioned' ? buckets : undefined,
    edges: layout === 'edges' ? true : undefined,
  };
  await ensureKeyspace(exec, keyspace, replication, options);
  // The default compaction depends on the nodes' version, known once the client is connected.
  const withOptions = tableOptions.render(options.client);
  await ensureTable(exec, { keyspace, table: STREAM_TIME_TABLE }, STREAM_TIME_DDL, [], { ...options, tableMustExist: false });
  await ensureTable(exec, wanted, versionedTableDdl(wanted), withOptions, options);
  // An existing table keeps the layout it was created with: one read of its columns gives both the partition key and
  // what an older adjunct's table lacks.
  const columns = await tableColumns(exec, wanted, 'read table columns');
  // The edge layout clusters by `prev` (a typed column can never be named so; the kind is checked all the same).
  const edges = columns.some((c) => c.name === 'prev' && c.kind === 'clustering');
  if (edges && options.typed !== undefined)
    throw new InvalidArgumentError(`table ${table} has the edge layout, which does not take typed columns`);
  const ref =
    options.scope === 'partitioned'
      ? { ...wanted, buckets: partitionedTableBuckets(wanted, columns, buckets) }
      : { ...wanted, edges: edges ? true : undefined };
  const kinds = await ensureColumns(exec, ref, VERSIONED_ADDED_COLUMNS, options, columns);
  const typed = options.typed === undefined ? undefined : await TypedColumns.open(exec, ref, options.typed, options);

  const streamTimes = new StreamTimeTable(exec, keyspace);
  const initialStreamTime = await streamTimes.load(table, writerId);
  const edgeReader = ref.edges === true ? new EdgeTableReader(exec, ref) : undefined;
  return new CassandraVersionedStore<K, V>({
    reader: new VersionedTableReader(exec, ref),
    edges: edgeReader && { reader: edgeReader, writer: new EdgeWriter(edgeReader, Buffer.from(writerId, 'utf8'), edgeKeys) },
    streamTimes,
    storeId: table,
    writerId,
    partition,
    // Tables created before the writer clustered keep it as a regular cell.
    writerIsCell: kinds.get('writer') !== 'clustering',
    historyRetentionMs: r,
    keySerde: options.keySerde ?? (stringSerde as unknown as Serde<K>),
    valueSerde: options.valueSerde ?? (stringSerde as unknown as Serde<V>),
    initialStreamTime,
    cleaner: { maxDirtyKeys, concurrency: 4, maxQueued: maxDirtyKeys, onError: options.onCleanupError },
    typed,
  });
}
