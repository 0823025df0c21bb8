/**
 * Orphaned generation tables on the real node: a previous generation replaced by a second switch within its keep time,
 * and a cancelled build, are named nowhere in the catalog row; the janitor finds their tables in system_schema, marks
 * each `dropping` and drops it once no heartbeat names it. Tables of the current and kept previous generation, a table
 * numbered above anything the row has named, and another store's tables sharing the name prefix are left alone.
 */
import { GenerationDrop, StoreCatalog, WorkerRegistry } from '../../../src/generations';
import { registerStore, useCatalogKeyspace } from './catalog-fixture';

jest.setTimeout(180_000);

describe('orphaned generation tables (real Cassandra)', () => {
  const ks = useCatalogKeyspace('orphans');
  const keyspace = ks.keyspace;

  const tables = async () =>
    (await ks.client().execute('SELECT table_name FROM system_schema.tables WHERE keyspace_name=?', [keyspace], { prepare: true })).rows
      .map((r) => String(r.get('table_name')))
      .filter((t) => t.startsWith('s_'))
      .sort();

  it('drops a previous generation replaced by a second switch and a cancelled build, once nobody writes them', async () => {
    const client = ks.client();
    const catalog = new StoreCatalog(client, keyspace);
    await registerStore(catalog, 's');
    const keep = 3_600_000;
    expect(await catalog.beginBuild('s')).toBe(2);
    await catalog.switchTo('s', 2, keep);
    expect(await catalog.beginBuild('s')).toBe(3);
    await catalog.switchTo('s', 3, keep); // previous is now 2: generation 1 is named nowhere
    expect(await catalog.beginBuild('s')).toBe(4);
    expect(await catalog.cancelBuild('s', 4)).toBe(true); // named nowhere either
    // s_g9: above anything the row has named; s_g1_g1: generation 1 of another store whose base table is s_g1.
    for (const t of ['s_g1', 's_g2', 's_g3', 's_g4', 's_g9', 's_g1_g1'])
      await client.execute(`CREATE TABLE ${keyspace}.${t} (k text PRIMARY KEY)`);
    const entry = (await catalog.get('s'))!;
    expect(entry).toMatchObject({ currentGeneration: 3, previousGeneration: 2, buildingGeneration: null, lastGeneration: 4 });
    expect(await catalog.orphans(entry)).toEqual([1, 4]);

    const registry = new WorkerRegistry(client, keyspace);
    // A worker still drains the cancelled build 4.
    await registry.beat({ pipeline: 'p', worker: 'w1', generation: 4, role: 'building' }, 60);
    const janitor = new GenerationDrop(catalog, registry, 60, 0);
    const dropTable = async (g: number) => void (await client.execute(`DROP TABLE IF EXISTS ${keyspace}.s_g${g}`));
    const now = () => new Date();
    expect(await janitor.pass('p', 's', now(), dropTable)).toBe(1);
    expect(await janitor.pass('p', 's', now(), dropTable)).toBeNull(); // 4 marked, but written
    expect(await catalog.get('s')).toMatchObject({ droppingGeneration: 4 });
    await registry.forget('p', 'w1', 4);
    expect(await janitor.pass('p', 's', now(), dropTable)).toBe(4);
    expect(await janitor.pass('p', 's', now(), dropTable)).toBeNull();
    expect(await tables()).toEqual(['s_g1_g1', 's_g2', 's_g3', 's_g9']);
    expect(await catalog.get('s')).toMatchObject({ currentGeneration: 3, previousGeneration: 2, droppingGeneration: null });
  });
});
