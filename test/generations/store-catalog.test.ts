/**
 * The catalog's conditional updates over a scripted driver: a timeout (outcome unknown) or a transient failure is
 * retried with the same statement after a backoff, and a retry that finds its condition false re-reads the row, where
 * "already in the wanted state" is success. A cancel is a compare-and-set on the build it cancels.
 */
import { Client, errors } from 'cassandra-driver';
import { AdjunctError } from '../../src/errors';
import { StoreCatalog } from '../../src/generations/store-catalog';

type Row = Record<string, unknown>;
type Answer = Row | Error;

const entry = (over: Row = {}): Row => ({
  store: 's',
  kind: 'versioned',
  scope: 'global',
  key_serde: 'string',
  value_serde: 'json',
  base_table: 's',
  history_retention_ms: 1000,
  buckets: null,
  current_generation: 3,
  previous_generation: 2,
  previous_drop_after: null,
  building_generation: 4,
  dropping_generation: null,
  last_generation: 4,
  updated_at: null,
  ...over,
});

const timedOut = () => new errors.OperationTimedOutError('The host 127.0.0.1:9042 did not reply before timeout 12000 ms', '127.0.0.1:9042');
const casWriteTimeout = () => Object.assign(new errors.ResponseError(0x1100, 'CAS operation timed out'), { writeType: 'CAS' });

/** A driver whose reads answer `reads` in turn (the last one repeats) and whose LWTs answer `writes` in turn. */
function scripted(reads: Row[], writes: Answer[]) {
  const statements: string[] = [];
  const resultOf = (row: Row) => ({ first: () => ({ get: (k: string) => row[k] }), rows: [{ get: (k: string) => row[k] }] });
  const client = {
    execute: async (cql: string) => {
      statements.push(cql);
      if (cql.startsWith('SELECT')) return resultOf(reads.length > 1 ? reads.shift()! : reads[0]);
      const w = writes.shift();
      if (w === undefined) throw new Error(`unexpected statement ${cql}`);
      if (w instanceof Error) throw w;
      return resultOf(w);
    },
  } as unknown as Client;
  const sleeps: number[] = [];
  const catalog = new StoreCatalog(client, 'ks', {
    attempts: 4,
    initialDelayMs: 100,
    maxDelayMs: 250,
    sleep: async (ms) => void sleeps.push(ms),
  });
  return { catalog, statements, sleeps, updates: () => statements.filter((s) => s.startsWith('UPDATE')) };
}

const applied = (yes: boolean): Row => ({ '[applied]': yes });

describe('StoreCatalog conditional updates', () => {
  it('a switch whose reply timed out is retried; the retry finds it applied (condition false, row switched): success', async () => {
    const s = scripted(
      [entry(), entry({ current_generation: 4, previous_generation: 3, building_generation: null })],
      [timedOut(), applied(false)],
    );
    expect(await s.catalog.switchTo('s', 4, 1000)).toEqual({ previous: 3, applied: false });
    expect(s.updates()).toHaveLength(2);
    expect(new Set(s.updates()).size).toBe(1); // the same conditional update
    expect(s.sleeps).toEqual([100]);
  });

  it('a switch that is not applied and finds another state still reports SWITCH_CONFLICT (retriable)', async () => {
    const s = scripted([entry(), entry({ building_generation: null })], [applied(false)]);
    await expect(s.catalog.switchTo('s', 4, 1000)).rejects.toMatchObject({ code: 'SWITCH_CONFLICT', retriable: true });
  });

  it('a begin whose LWT timed out (WriteTimeout, type CAS) is retried and returns the build it began', async () => {
    const s = scripted(
      [entry({ building_generation: null, last_generation: 3 }), entry({ building_generation: 4, last_generation: 4 })],
      [casWriteTimeout(), casWriteTimeout(), applied(false)],
    );
    expect(await s.catalog.beginBuild('s')).toBe(4);
    expect(s.updates()).toHaveLength(3);
    expect(s.sleeps).toEqual([100, 200]);
  });

  it('gives up after its attempts with the last (retriable) failure, and never retries one no retry fixes', async () => {
    const s = scripted([entry()], [timedOut(), timedOut(), timedOut(), timedOut()]);
    await expect(s.catalog.switchTo('s', 4, 1000)).rejects.toMatchObject({ code: 'CASSANDRA_UNAVAILABLE', retriable: true });
    expect(s.sleeps).toEqual([100, 200, 250]);
    const bad = scripted([entry()], [new errors.ResponseError(0x2200, 'Undefined column name')]);
    const err = await bad.catalog.switchTo('s', 4, 1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdjunctError);
    expect(err).toMatchObject({ retriable: false });
    expect(bad.updates()).toHaveLength(1);
  });

  it('cancels a build by compare-and-set on that build, and a rollback to the current generation re-reads after it', async () => {
    const s = scripted([entry(), entry({ building_generation: null })], [applied(true)]);
    expect(await s.catalog.rollbackTo('s', 3, 1000)).toEqual({ current: 3, previous: 2, changed: false });
    expect(s.updates()).toHaveLength(1);
    expect(s.updates()[0]).toMatch(/SET building_generation=null.* IF building_generation=\?$/);
    // A build begun between the read and the cancel (5 replaces 4): the cancel does not apply, the re-read cancels 5.
    const raced = scripted(
      [entry(), entry({ building_generation: 5 }), entry({ building_generation: null })],
      [applied(false), applied(true)],
    );
    expect(await raced.catalog.rollbackTo('s', 3, 1000)).toEqual({ current: 3, previous: 2, changed: false });
    expect(raced.updates()).toHaveLength(2);
  });
});
