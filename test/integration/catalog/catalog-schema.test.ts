/**
 * The catalog created by an earlier release gets the columns this one needs: ensureCatalog adds `dropping_generation`
 * and `last_generation` to an existing `adjunct_stores` by ALTER TABLE, keeps its rows,, and is idempotent.
 */
import { Client } from 'cassandra-driver';
import { ensureCatalog } from '../../../src/catalog';
import { StoreCatalog } from '../../../src/generations';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { createKeyspace, uniqueName } from '../helpers';

jest.setTimeout(180_000);

describe('catalog schema upgrade', () => {
  let client: Client;
  const keyspace = uniqueName('catalog_up');
  beforeAll(async () => {
    const ep = stackEndpoints();
    // DDL on the shared, loaded dev node can take longer than the driver's default 12 s.
    client = new Client({
      contactPoints: ep.cassandraContactPoints,
      protocolOptions: { port: ep.cassandraPort },
      localDataCenter: ep.localDataCenter,
      socketOptions: { readTimeout: 60_000 },
    });
    await client.connect();
    await createKeyspace(client, keyspace);
  });
  afterAll(async () => {
    await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    await client.shutdown();
  });

  it('adds the drop-protocol columns to an adjunct_stores of the former shape, keeping its rows', async () => {
    await client.execute(`CREATE TABLE ${keyspace}.adjunct_stores (
      store text PRIMARY KEY, kind text, scope text, key_serde text, value_serde text, base_table text,
      history_retention_ms bigint, buckets int, current_generation int, previous_generation int,
      previous_drop_after timestamp, building_generation int, updated_at timestamp)`);
    await client.execute(
      `INSERT INTO ${keyspace}.adjunct_stores (store, kind, scope, key_serde, value_serde, base_table, current_generation, previous_generation) VALUES ('s','versioned','global','string','json','s',3,2)`,
    );
    await ensureCatalog(client, keyspace);
    await ensureCatalog(client, keyspace); // idempotent: nothing left to add
    const cols = await client.execute('SELECT column_name FROM system_schema.columns WHERE keyspace_name=? AND table_name=?', [
      keyspace,
      'adjunct_stores',
    ]);
    expect(cols.rows.map((r) => r.get('column_name'))).toEqual(expect.arrayContaining(['dropping_generation', 'last_generation']));
    const catalog = new StoreCatalog(client, keyspace);
    expect(await catalog.get('s')).toMatchObject({
      currentGeneration: 3,
      previousGeneration: 2,
      droppingGeneration: null,
      lastGeneration: null,
    });
    // A build after the upgrade takes a number above every one in the row, and records it.
    expect(await catalog.beginBuild('s')).toBe(4);
    expect(await catalog.get('s')).toMatchObject({ buildingGeneration: 4, lastGeneration: 4 });
  });
});
