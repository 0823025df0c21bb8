/**
 * The catalog's compare-and-sets on the real node. A conditional update whose reply is lost after Cassandra applied it
 * (what a WriteTimeout of type CAS or a driver timeout leaves: outcome unknown) is retried: the retry finds its condition
 * false, the re-read finds the wanted state, and the call succeeds. A cancel is conditional on the build it cancels, so a
 * late cancel never removes a newer build.
 */
import { Client, errors } from 'cassandra-driver';
import { StoreCatalog } from '../../../src/generations';
import { registerStore, useCatalogKeyspace } from './catalog-fixture';

jest.setTimeout(120_000);

const fast = { attempts: 4, initialDelayMs: 20, maxDelayMs: 100, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };

/** The client, except that the reply of the next `lose` conditional updates is lost after Cassandra executed them. */
function losingReplies(client: Client) {
  const state = { lose: 0, lost: 0 };
  const proxy = new Proxy(client, {
    get(target, prop) {
      if (prop !== 'execute') {
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return async (cql: string, params: unknown, opts: unknown) => {
        const rs = await target.execute(cql, params as unknown[], opts as object);
        if (/ IF /.test(cql) && state.lose > 0) {
          state.lose--;
          state.lost++;
          throw new errors.OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms', '127.0.0.1:9042');
        }
        return rs;
      };
    },
  });
  return { client: proxy, state };
}

describe('catalog compare-and-sets on the real node', () => {
  const ks = useCatalogKeyspace('catalog_cas');
  const keyspace = ks.keyspace;

  it('a begin, switch and cancel whose replies were lost after they applied succeed on retry, the row as wanted', async () => {
    const lossy = losingReplies(ks.client());
    const catalog = new StoreCatalog(lossy.client, keyspace, fast);
    await registerStore(catalog, 'lost');
    lossy.state.lose = 1;
    expect(await catalog.beginBuild('lost')).toBe(2);
    lossy.state.lose = 1;
    expect(await catalog.switchTo('lost', 2, 60_000)).toEqual({ previous: 1, applied: false });
    expect(await catalog.get('lost')).toMatchObject({ currentGeneration: 2, previousGeneration: 1, buildingGeneration: null });
    expect(await catalog.beginBuild('lost')).toBe(3);
    lossy.state.lose = 1;
    // Applied by the lost attempt: the retry is not applied, and the row has no build.
    expect(await catalog.cancelBuild('lost', 3)).toBe(false);
    expect(await catalog.get('lost')).toMatchObject({ currentGeneration: 2, buildingGeneration: null, lastGeneration: 3 });
    expect(lossy.state.lost).toBe(3);
  });

  it('a late cancel of a build already replaced leaves the newer build in place (conditional, never a plain write)', async () => {
    const catalog = new StoreCatalog(ks.client(), keyspace);
    await registerStore(catalog, 'late');
    expect(await catalog.beginBuild('late')).toBe(2);
    expect(await catalog.cancelBuild('late', 2)).toBe(true);
    expect(await catalog.beginBuild('late')).toBe(3);
    // An operator's cancel of 2, delayed until after 3 began: nothing changes.
    expect(await catalog.cancelBuild('late', 2)).toBe(false);
    expect(await catalog.get('late')).toMatchObject({ buildingGeneration: 3, lastGeneration: 3 });
    // A rollback to the current generation cancels the build in progress, whatever its number.
    expect(await catalog.rollbackTo('late', 1, 60_000)).toEqual({ current: 1, previous: null, changed: false });
    expect(await catalog.get('late')).toMatchObject({ currentGeneration: 1, buildingGeneration: null });
  });

  it('a switch to a build cancelled meanwhile is not applied: SWITCH_CONFLICT, and the row keeps the cancel', async () => {
    const catalog = new StoreCatalog(ks.client(), keyspace);
    await registerStore(catalog, 'conflict');
    expect(await catalog.beginBuild('conflict')).toBe(2);
    expect(await catalog.cancelBuild('conflict', 2)).toBe(true);
    await expect(catalog.switchTo('conflict', 2, 60_000)).rejects.toMatchObject({ code: 'SWITCH_CONFLICT', retriable: true });
    expect(await catalog.get('conflict')).toMatchObject({ currentGeneration: 1, buildingGeneration: null });
  });
});
