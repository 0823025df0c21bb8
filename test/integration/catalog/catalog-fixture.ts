/** Shared set-up of the catalog integration tests: a keyspace holding the catalog tables, and a registered store. */
import { Client } from 'cassandra-driver';
import { ensureCatalog } from '../../../src/catalog';
import { StoreCatalog } from '../../../src/generations';
import { createKeyspace, newCassandraClient, uniqueName } from '../helpers';

/** Registers a versioned, global store `name` (string keys, JSON values) whose base table has its name. */
export const registerStore = (catalog: StoreCatalog, name: string) =>
  catalog.register({
    store: name,
    baseTable: name,
    kind: 'versioned',
    scope: 'global',
    keySerde: 'string',
    valueSerde: 'json',
    historyRetentionMs: 60_000,
    buckets: null,
  } as Parameters<StoreCatalog['register']>[0]);

/** A fresh keyspace with the catalog tables for the file's tests (dropped after them); `client()` once they run. */
export function useCatalogKeyspace(prefix: string): { keyspace: string; client: () => Client } {
  let client: Client | undefined;
  const keyspace = uniqueName(prefix);
  beforeAll(async () => {
    client = await newCassandraClient();
    await createKeyspace(client, keyspace);
    await ensureCatalog(client, keyspace);
  });
  afterAll(async () => {
    await client?.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await client?.shutdown();
  });
  return {
    keyspace,
    client: () => {
      if (!client) throw new Error('the catalog keyspace is set up in beforeAll');
      return client;
    },
  };
}
