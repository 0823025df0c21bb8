/** Server-side request counts of a keyspace from Cassandra's virtual tables (coordinator read/write latency counters). */
import { Client } from 'cassandra-driver';

/** Coordinator reads and writes per table of one keyspace, as counted by Cassandra. */
export interface ServerCounts {
  reads: number;
  writes: number;
  byTable: Record<string, { reads: number; writes: number }>;
}

/** Reads system_views.coordinator_{read,write}_latency for a keyspace (counts since Cassandra started). */
export async function serverCounts(client: Client, keyspace: string): Promise<ServerCounts | null> {
  const out: ServerCounts = { reads: 0, writes: 0, byTable: {} };
  try {
    for (const [view, field] of [
      ['coordinator_read_latency', 'reads'],
      ['coordinator_write_latency', 'writes'],
    ] as const) {
      const rs = await client.execute(`SELECT table_name, count FROM system_views.${view} WHERE keyspace_name = ?`, [keyspace], {
        fetchSize: 1000,
      });
      for (const r of rs.rows) {
        const n = Number(r.count);
        const t = (out.byTable[r.table_name as string] ??= { reads: 0, writes: 0 });
        t[field] += n;
        out[field] += n;
      }
    }
    return out;
  } catch {
    return null;
  }
}
