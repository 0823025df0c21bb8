/** What Cassandra reports about the size of a table's partitions (used by partition-size.ts). */
import { Client } from 'cassandra-driver';

/** Rows per Cassandra partition, read back from Cassandra (a paged scan of the partition key columns, counted here). */
export async function rowsPerPartition(client: Client, keyspace: string, table: string, partitionKey: string[]): Promise<number[]> {
  const counts = new Map<string, number>();
  const cql = `SELECT ${partitionKey.join(', ')} FROM ${keyspace}.${table}`;
  let pageState: string | undefined;
  do {
    const rs = await client.execute(cql, [], { prepare: true, fetchSize: 5000, pageState, readTimeout: 120_000 });
    for (const row of rs.rows) {
      const where = partitionKey.map((c) => String(row.get(c))).join('/');
      counts.set(where, (counts.get(where) ?? 0) + 1);
    }
    pageState = rs.pageState ?? undefined;
  } while (pageState);
  return [...counts.values()];
}

/**
 * Cassandra's own largest-partition metric for a table (`system_views.max_partition_size`, in MiB: the
 * "compacted partition maximum bytes" of nodetool tablestats, over the flushed SSTables), or null before any flush.
 */
export async function maxPartitionMiB(client: Client, keyspace: string, table: string): Promise<number | null> {
  const rs = await client.execute('SELECT mebibytes FROM system_views.max_partition_size WHERE keyspace_name = ? AND table_name = ?', [
    keyspace,
    table,
  ]);
  const v = rs.first()?.get('mebibytes');
  return v === undefined || v === null ? null : Number(v);
}

/** On-disk size of a table's SSTables (`system_views.disk_usage`, MiB). */
export async function diskMiB(client: Client, keyspace: string, table: string): Promise<number> {
  const rs = await client.execute('SELECT mebibytes FROM system_views.disk_usage WHERE keyspace_name = ? AND table_name = ?', [
    keyspace,
    table,
  ]);
  return Number(rs.first()?.get('mebibytes') ?? 0);
}

/**
 * Flushes a table's memtable without nodetool (the dev stack runs Cassandra without JMX): sets
 * `memtable_flush_period_in_ms`, waits until the SSTables hold the data (disk usage stops growing), then resets it.
 */
export async function flushTable(client: Client, keyspace: string, table: string, timeoutMs = 180_000): Promise<void> {
  await client.execute(`ALTER TABLE ${keyspace}.${table} WITH memtable_flush_period_in_ms = 2000`);
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let stable = 0;
  while (Date.now() < deadline && stable < 3) {
    await new Promise((r) => setTimeout(r, 3000));
    const now = await diskMiB(client, keyspace, table);
    stable = now > 0 && now === last ? stable + 1 : 0;
    last = now;
  }
  await client.execute(`ALTER TABLE ${keyspace}.${table} WITH memtable_flush_period_in_ms = 0`);
}

/** `system.size_estimates` of a table: estimated partitions and mean partition size over its token ranges (refreshed every few minutes). */
export async function sizeEstimates(
  client: Client,
  keyspace: string,
  table: string,
): Promise<{ partitions: number; meanPartitionBytes: number } | null> {
  const rs = await client.execute(
    'SELECT partitions_count, mean_partition_size FROM system.size_estimates WHERE keyspace_name = ? AND table_name = ?',
    [keyspace, table],
  );
  if (rs.rowLength === 0) return null;
  let partitions = 0;
  let bytes = 0;
  for (const r of rs.rows) {
    const n = Number(r.get('partitions_count'));
    partitions += n;
    bytes += n * Number(r.get('mean_partition_size'));
  }
  return { partitions, meanPartitionBytes: partitions === 0 ? 0 : Math.round(bytes / partitions) };
}
