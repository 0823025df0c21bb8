import { Client } from 'cassandra-driver';
import { assertIdentifier } from './identifier';

/** CQL of the catalog tables (store pointers/generations and pipeline status), created in the store keyspace. */
export function catalogDdl(keyspace: string): string[] {
  assertIdentifier(keyspace, 'keyspace');
  return [
    `CREATE TABLE IF NOT EXISTS ${keyspace}.adjunct_stores (
      store text PRIMARY KEY,
      kind text, scope text, key_serde text, value_serde text, base_table text,
      history_retention_ms bigint, buckets int,
      current_generation int, previous_generation int, previous_drop_after timestamp,
      building_generation int, updated_at timestamp)`,
    `CREATE TABLE IF NOT EXISTS ${keyspace}.adjunct_pipeline_status (
      pipeline text, generation int,
      store text, state text, records_done bigint, records_total bigint,
      end_offsets text, progress text, last_error text, worker text, updated_at timestamp,
      PRIMARY KEY ((pipeline), generation)) WITH CLUSTERING ORDER BY (generation DESC)`,
  ];
}

/** Creates the catalog tables if missing and waits for schema agreement. */
export async function ensureCatalog(client: Client, keyspace: string): Promise<void> {
  for (const ddl of catalogDdl(keyspace)) {
    await client.execute(ddl);
  }
  await waitForSchemaAgreement(client);
}

/** Waits (bounded) until all nodes agree on the schema, so concurrent creators never race. */
export async function waitForSchemaAgreement(client: Client, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const agreed = await (client.metadata as unknown as { checkSchemaAgreement(): Promise<boolean> }).checkSchemaAgreement();
    if (agreed) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no schema agreement after ${timeoutMs} ms`);
}
