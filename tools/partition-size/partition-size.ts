/**
 * `npx tsx tools/partition-size/partition-size.ts`: writes the same records into a partitioned versioned store in the bucketed layout and in
 * the layout from before buckets, then shows the largest Cassandra partition of each (rows counted by Cassandra,
 * data bytes, and Cassandra's own max_partition_size metric after a flush). It writes through the worker's write
 * path below the sink: one CassandraVersionedStore per source partition and one coalescing WriteBatcher.
 *
 *   npx tsx tools/partition-size/partition-size.ts --records 1000000 --partitions 6 --keys 200000 [--buckets 64] [--layouts bucketed,unbucketed]
 */
import { parseArgs } from 'node:util';
import { Client } from 'cassandra-driver';
import { stackEndpoints } from '../devstack/endpoints';
import {
  bucketOf,
  createWriteBatcher,
  CqlExecutor,
  DEFAULT_PARTITION_BUCKETS,
  openCassandraVersionedStore,
  validateKeyspaceName,
} from '../../src/store/cassandra';
import { stringSerde } from '../../src/store/serde';
import { CASSANDRA_BATCH_WARN_BYTES } from '../../src/store/cassandra/batch-data-size';
import { diskMiB, flushTable, maxPartitionMiB, rowsPerPartition, sizeEstimates } from './measure';

/** Run settings (flags). */
interface Settings {
  records: number;
  partitions: number;
  keys: number;
  buckets: number;
  valueBytes: number;
  layouts: ('bucketed' | 'unbucketed')[];
  keyspace: string;
  keep: boolean;
  /** Measure tables a previous run kept (--keep) instead of writing them again. */
  measureOnly: boolean;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      records: { type: 'string', default: '1000000' },
      partitions: { type: 'string', default: '6' },
      keys: { type: 'string', default: '200000' },
      buckets: { type: 'string', default: String(DEFAULT_PARTITION_BUCKETS) },
      'value-bytes': { type: 'string', default: '200' },
      layouts: { type: 'string', default: 'bucketed,unbucketed' },
      keyspace: { type: 'string', default: 'adjunct_partition_size' },
      keep: { type: 'boolean', default: false },
      'measure-only': { type: 'boolean', default: false },
    },
  });
  const int = (name: string, v: string | undefined): number => {
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${String(v)}`);
    return n;
  };
  const layouts = String(values.layouts).split(',');
  for (const l of layouts) if (l !== 'bucketed' && l !== 'unbucketed') throw new Error(`unknown layout ${l}`);
  return {
    records: int('records', values.records),
    partitions: int('partitions', values.partitions),
    keys: int('keys', values.keys),
    buckets: int('buckets', values.buckets),
    valueBytes: int('value-bytes', values['value-bytes']),
    layouts: layouts as Settings['layouts'],
    keyspace: validateKeyspaceName(String(values.keyspace)),
    keep: values.keep === true,
    measureOnly: values['measure-only'] === true,
  };
}

/** Record i: its key (a permutation of the key space, so every key gets records/keys versions), partition, value and time. */
function recordOf(s: Settings, i: number): { key: string; partition: number; value: string; timestamp: number } {
  const k = (i * 7919) % s.keys;
  const key = `customer-${String(k).padStart(8, '0')}`;
  const head = `{"i":${i},"pad":"`;
  const value = `${head}${'x'.repeat(Math.max(0, s.valueBytes - head.length - 2))}"}`;
  return { key, partition: k % s.partitions, value, timestamp: 1_000_000 + i };
}

/** The statement adjunct ran for a partitioned versioned table before buckets (one Cassandra partition per source partition). */
function unbucketedDdl(keyspace: string, table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${keyspace}.${table} (partition int, key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((partition), key, valid_from)) WITH CLUSTERING ORDER BY (key ASC, valid_from DESC) AND compaction = {'class': 'LeveledCompactionStrategy'}`;
}

/** Where each record lands, and its data bytes: key, value, writer and valid_from. */
function placeOf(s: Settings, layout: Settings['layouts'][number], r: ReturnType<typeof recordOf>): { where: string; bytes: number } {
  const where = layout === 'bucketed' ? `${r.partition}/${bucketOf(Buffer.from(r.key), s.buckets)}` : `${r.partition}`;
  return { where, bytes: Buffer.byteLength(r.key) + Buffer.byteLength(r.value) + `t:${r.partition}`.length + 8 };
}

/** Rows and data bytes per Cassandra partition of the whole data set (what load() writes). */
function expectedSizes(s: Settings, layout: Settings['layouts'][number]): Map<string, { rows: number; bytes: number }> {
  const sizes = new Map<string, { rows: number; bytes: number }>();
  for (let i = 0; i < s.records; i++) {
    const { where, bytes } = placeOf(s, layout, recordOf(s, i));
    const size = sizes.get(where) ?? { rows: 0, bytes: 0 };
    size.rows++;
    size.bytes += bytes;
    sizes.set(where, size);
  }
  return sizes;
}

/** Writes every record into one layout's table through the worker's store and batcher; returns the data bytes per Cassandra partition. */
async function load(
  client: Client,
  s: Settings,
  layout: Settings['layouts'][number],
  table: string,
): Promise<Map<string, { rows: number; bytes: number }>> {
  if (layout === 'unbucketed') await client.execute(unbucketedDdl(s.keyspace, table));
  // The worker's batch bounds (5,120 bytes as Cassandra counts them, 64 rows, 2 ms linger), 16 batches in flight, and like the worker, timeouts
  // of a busy (shared) Cassandra are retried with backoff.
  const retry = { timeoutMs: 600_000, maxDelayMs: 5_000 };
  const batcher = createWriteBatcher(new CqlExecutor(client, { retry }), s.keyspace, {
    maxBytes: CASSANDRA_BATCH_WARN_BYTES,
    maxRows: 64,
    lingerMs: 2,
    maxConcurrent: 16,
  });
  const stores = await Promise.all(
    Array.from({ length: s.partitions }, (_, p) =>
      openCassandraVersionedStore<string, string>({
        client,
        keyspace: s.keyspace,
        storeName: table,
        scope: 'partitioned',
        partition: p,
        writerId: `t:${p}`,
        buckets: s.buckets,
        historyRetentionMs: 1e12, // nothing expires: every version stays, the widest partitions possible
        valueSerde: stringSerde,
        batcher,
        retry,
      }),
    ),
  );
  const sizes = new Map<string, { rows: number; bytes: number }>();
  const inFlight = new Set<Promise<unknown>>();
  const started = Date.now();
  for (let i = 0; i < s.records; i++) {
    const r = recordOf(s, i);
    const { where, bytes } = placeOf(s, layout, r);
    const size = sizes.get(where) ?? { rows: 0, bytes: 0 };
    size.rows++;
    size.bytes += bytes;
    sizes.set(where, size);
    const p = stores[r.partition].write(r.key, r.value, r.timestamp);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size >= 1024) await Promise.race(inFlight);
    if ((i + 1) % 100_000 === 0)
      process.stderr.write(`  ${layout}: ${i + 1} records, ${Math.round(((i + 1) / (Date.now() - started)) * 1000)}/s\n`);
  }
  batcher.flush();
  await Promise.all(inFlight);
  await Promise.all(stores.map((st) => st.close()));
  return sizes;
}

async function main(): Promise<void> {
  const s = settings();
  const ep = stackEndpoints();
  const client = new Client({
    contactPoints: ep.cassandraContactPoints,
    protocolOptions: { port: ep.cassandraPort },
    localDataCenter: ep.localDataCenter,
  });
  await client.connect();
  const report: Record<string, unknown> = {
    records: s.records,
    partitions: s.partitions,
    keys: s.keys,
    buckets: s.buckets,
    valueBytes: s.valueBytes,
  };
  try {
    await client.execute(
      `CREATE KEYSPACE IF NOT EXISTS ${s.keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
    );
    for (const layout of s.layouts) {
      const table = `records_${layout}`;
      const started = Date.now();
      let sizes = expectedSizes(s, layout);
      if (!s.measureOnly) {
        await client.execute(`DROP TABLE IF EXISTS ${s.keyspace}.${table}`);
        sizes = await load(client, s, layout, table);
        await flushTable(client, s.keyspace, table);
      }
      const seconds = (Date.now() - started) / 1000;
      const counted = await rowsPerPartition(client, s.keyspace, table, layout === 'bucketed' ? ['partition', 'bucket'] : ['partition']);
      const bytes = [...sizes.values()].map((v) => v.bytes);
      report[layout] = {
        writeSeconds: Math.round(seconds),
        cassandraPartitions: counted.length,
        rowsTotal: counted.reduce((a, b) => a + b, 0),
        maxRowsPerPartition: Math.max(...counted),
        minRowsPerPartition: Math.min(...counted),
        maxDataBytesPerPartition: Math.max(...bytes),
        maxPartitionMiBMetric: await maxPartitionMiB(client, s.keyspace, table),
        diskMiB: await diskMiB(client, s.keyspace, table),
        sizeEstimates: await sizeEstimates(client, s.keyspace, table),
      };
      process.stderr.write(`${layout}: ${JSON.stringify(report[layout])}\n`);
    }
  } finally {
    if (!s.keep) await client.execute(`DROP KEYSPACE IF EXISTS ${s.keyspace}`);
    await client.shutdown();
  }
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
