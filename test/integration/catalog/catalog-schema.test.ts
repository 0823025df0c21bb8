/**
 * The catalog created by an earlier release gets the columns this one needs: ensureCatalog adds `dropping_generation`
 * and `last_generation` to an existing `adjunct_stores` by ALTER TABLE, keeps its rows, and is idempotent. Workers
 * starting at once on a fresh keyspace (separate clients) all get a usable catalog: none fails with a table that
 * system_schema lists but the coordinator does not know yet.
 */
import { Client } from 'cassandra-driver';
import { ensureCatalog } from '../../../src/catalog';
import { StoreCatalog, TableOwners } from '../../../src/generations';
import { CqlExecutor, ensureKeyspace, renderReplication } from '../../../src/store/cassandra';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { createKeyspace, uniqueName } from '../helpers';
import { registerStore } from './catalog-fixture';

jest.setTimeout(180_000);

describe('catalog schema: upgrade and concurrent creation', () => {
  let client: Client;
  const keyspace = uniqueName('catalog_up');
  const racedKeyspaces: string[] = [];
  // DDL on the shared, loaded dev node can take longer than the driver's default 12 s.
  const newClient = () => {
    const ep = stackEndpoints();
    return new Client({
      contactPoints: ep.cassandraContactPoints,
      protocolOptions: { port: ep.cassandraPort },
      localDataCenter: ep.localDataCenter,
      socketOptions: { readTimeout: 60_000 },
    });
  };
  beforeAll(async () => {
    client = newClient();
    await client.connect();
    await createKeyspace(client, keyspace);
  });
  afterAll(async () => {
    for (const ks of [keyspace, ...racedKeyspaces]) await client.execute(`DROP KEYSPACE IF EXISTS ${ks}`);
    await client.shutdown();
  });

  it('gives every one of several workers starting at once on a fresh keyspace a usable catalog', async () => {
    const clients = [newClient(), newClient(), newClient(), newClient()];
    await Promise.all(clients.map((c) => c.connect()));
    try {
      for (let round = 0; round < 5; round++) {
        const ks = uniqueName('catalog_race');
        racedKeyspaces.push(ks);
        const owner = { store: 's', pipeline: 'p', groupId: 'g' };
        // What a starting worker does: keyspace, catalog, then the first catalog statement (the base-table claim).
        const results = await Promise.allSettled(
          clients.map(async (c, i) => {
            await ensureKeyspace(new CqlExecutor(c, {}, { keyspace: ks }), ks, renderReplication(undefined), {});
            await ensureCatalog(c, ks);
            await new TableOwners(c, ks).claim('s', owner, `w${i}`);
          }),
        );
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
        expect(await new TableOwners(client, ks).ownerOf('s')).toEqual(owner);
      }
    } finally {
      await Promise.all(clients.map((c) => c.shutdown()));
    }
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

  it('refuses a rollback to a kept generation whose table was dropped outside adjunct, naming the table; rolls back once it exists', async () => {
    await ensureCatalog(client, keyspace);
    const catalog = new StoreCatalog(client, keyspace);
    await registerStore(catalog, 'rb');
    expect(await catalog.beginBuild('rb')).toBe(2);
    await catalog.switchTo('rb', 2, 3_600_000);
    // Generation 1's table is gone (never created here: as if dropped outside adjunct).
    const err = await catalog.rollbackTo('rb', 1, 3_600_000).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'NO_PREVIOUS_GENERATION' });
    expect(String((err as Error).message)).toContain(`${keyspace}.rb_g1 no longer exists`);
    expect(await catalog.get('rb')).toMatchObject({ currentGeneration: 2, previousGeneration: 1 });
    await client.execute(`CREATE TABLE ${keyspace}.rb_g1 (k text PRIMARY KEY)`);
    expect(await catalog.rollbackTo('rb', 1, 3_600_000)).toEqual({ current: 1, previous: 2, changed: true });
  });

  it('replaces a lost build by compare-and-set: workers finding it lost at once get one new number, never a reused one', async () => {
    await ensureCatalog(client, keyspace);
    const catalog = new StoreCatalog(client, keyspace);
    await registerStore(catalog, 'rp');
    expect(await catalog.beginBuild('rp')).toBe(2);
    const raced = await Promise.all([catalog.replaceBuild('rp', 2), catalog.replaceBuild('rp', 2), catalog.replaceBuild('rp', 2)]);
    expect(raced).toEqual([3, 3, 3]);
    expect(await catalog.get('rp')).toMatchObject({ currentGeneration: 1, buildingGeneration: 3, lastGeneration: 3 });
    // A worker late to find 2 lost gets the build that replaced it; with no build left, null.
    expect(await catalog.replaceBuild('rp', 2)).toBe(3);
    expect(await catalog.cancelBuild('rp', 3)).toBe(true);
    expect(await catalog.replaceBuild('rp', 3)).toBeNull();
    expect(await catalog.beginBuild('rp')).toBe(4);
  });
});
