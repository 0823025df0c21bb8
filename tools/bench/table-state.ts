/** The on-disk state of the tables a read phase compares: flushed alike, and how many SSTables each reads from. */
import * as fs from 'fs';
import * as path from 'path';
import { Client } from 'cassandra-driver';
import type { TableRef as StoreTableRef } from '../../src/store/cassandra/layout';
import { StackSettings } from '../devstack/endpoints';
import { nodeDirs, stackNode } from '../devstack/stack-node';
import { flushTable } from '../partition-size/measure';

/** A table by keyspace and name. */
type TableRef = Pick<StoreTableRef, 'keyspace' | 'table'>;

/** The number of SSTables (`*-Data.db` files) of a table on the single-node stack's Cassandra, or undefined when not found. */
export function sstableCount(s: StackSettings, t: TableRef): number | undefined {
  const ksDir = path.join(nodeDirs(s, stackNode('cassandra', 1, 1)).data, 'data', t.keyspace);
  if (!fs.existsSync(ksDir)) return undefined;
  const dirs = fs.readdirSync(ksDir).filter((d) => d.startsWith(`${t.table}-`));
  if (dirs.length === 0) return undefined;
  return dirs.reduce((n, d) => n + fs.readdirSync(path.join(ksDir, d)).filter((f) => f.endsWith('-Data.db')).length, 0);
}

/**
 * Flushes every table's memtable, so that no table of a comparison is read partly from memory while another is read
 * from disk only; returns each table's SSTable count afterwards (keyed `keyspace.table`).
 */
export async function flushForReads(client: Client, s: StackSettings, tables: TableRef[]): Promise<Record<string, number | null>> {
  for (const t of tables) await flushTable(client, t.keyspace, t.table);
  return Object.fromEntries(tables.map((t) => [`${t.keyspace}.${t.table}`, sstableCount(s, t) ?? null]));
}
