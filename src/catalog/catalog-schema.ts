import { Client } from 'cassandra-driver';
import { validateKeyspaceName } from '../store/cassandra';
import { awaitTableUsable, CqlExecutor } from '../store/cassandra';
import { requireSchemaAgreement } from './catalog-cql';

/** Columns and keys of each catalog table (store generations, pipeline status, pause flags, worker heartbeats, base-table owners). */
const CATALOG_TABLES: readonly { table: string; body: string }[] = [
  {
    table: 'adjunct_stores',
    body: `store text PRIMARY KEY,
      kind text, scope text, key_serde text, value_serde text, base_table text,
      history_retention_ms bigint, buckets int,
      current_generation int, previous_generation int, previous_drop_after timestamp,
      building_generation int, dropping_generation int, last_generation int, updated_at timestamp)`,
  },
  {
    table: 'adjunct_pipeline_status',
    body: `pipeline text, generation int,
      store text, state text, records_done bigint, records_total bigint,
      end_offsets text, start_offsets text, progress text, last_error text, worker text, updated_at timestamp,
      ready_at timestamp,
      PRIMARY KEY ((pipeline), generation)) WITH CLUSTERING ORDER BY (generation DESC)`,
  },
  { table: 'adjunct_pipeline_control', body: `pipeline text PRIMARY KEY, paused boolean, updated_at timestamp)` },
  {
    table: 'adjunct_workers',
    body: `pipeline text, worker text, generation int, role text, updated_at timestamp,
      PRIMARY KEY ((pipeline), worker, generation))`,
  },
  {
    table: 'adjunct_table_owners',
    body: `base_table text PRIMARY KEY,
      store text, pipeline text, group_id text, worker text, claimed_at timestamp)`,
  },
];

/** The catalog tables of a keyspace with their CREATE statements. */
function catalogTables(keyspace: string): { table: string; ddl: string }[] {
  validateKeyspaceName(keyspace);
  return CATALOG_TABLES.map(({ table, body }) => ({ table, ddl: `CREATE TABLE IF NOT EXISTS ${keyspace}.${table} (\n      ${body}` }));
}

/** Columns added to catalog tables after their first release: a catalog created earlier gets them by ALTER TABLE. */
const ADDED_COLUMNS: readonly { table: string; column: string; type: string }[] = [
  { table: 'adjunct_stores', column: 'dropping_generation', type: 'int' },
  { table: 'adjunct_stores', column: 'last_generation', type: 'int' },
  { table: 'adjunct_pipeline_status', column: 'start_offsets', type: 'text' },
  { table: 'adjunct_pipeline_status', column: 'ready_at', type: 'timestamp' },
];

/**
 * Creates the catalog tables that are missing (a catalog in place costs six reads instead of five DDL statements), adds
 * columns newer releases need, and waits for schema agreement (also when another worker created the tables just now).
 */
export async function ensureCatalog(client: Client, keyspace: string): Promise<void> {
  const exec = new CqlExecutor(client, {}, { keyspace });
  const tables = await exec.read(
    'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?',
    [keyspace],
    'reading the catalog tables',
  );
  const present = new Set(tables.rows.map((r) => String(r.get('table_name'))));
  for (const t of catalogTables(keyspace)) if (!present.has(t.table)) await exec.ddl(t.ddl, 'creating the adjunct catalog tables');
  await requireSchemaAgreement(client, 'creating the adjunct catalog tables');
  // A table another worker created just now is listed before the coordinator accepts statements naming it.
  for (const t of catalogTables(keyspace)) if (present.has(t.table)) await awaitTableUsable(exec, { keyspace, table: t.table });
  // Only the tables that gained columns (the store keyspace also holds every generation table).
  const rs = await client.execute(
    'SELECT table_name, column_name FROM system_schema.columns WHERE keyspace_name=? AND table_name IN ?',
    [keyspace, [...new Set(ADDED_COLUMNS.map((c) => c.table))]],
    { prepare: true },
  );
  const have = new Set(rs.rows.map((r) => `${r.get('table_name') as string}.${r.get('column_name') as string}`));
  const missing = ADDED_COLUMNS.filter((c) => !have.has(`${c.table}.${c.column}`));
  if (!missing.length) return;
  // Concurrent workers may race to add a column: "already exists" means another one did.
  for (const c of missing)
    await exec.ddl(`ALTER TABLE ${keyspace}.${c.table} ADD ${c.column} ${c.type}`, 'adding catalog columns').catch((e: unknown) => {
      if (!/already exist|conflicts with an existing column/i.test(String((e as Error)?.message))) throw e;
    });
  await requireSchemaAgreement(client, 'adding catalog columns');
}
