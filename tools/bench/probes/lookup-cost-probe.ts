/**
 * Probe behind issue #13's lookup target: where the library's get costs Cassandra more than the bare SELECT, on the
 * tables of a kept bench run (`npm run bench -- --phases adjunct,lookups --layout edges --keep`).
 *
 *   npx tsx tools/bench/probes/lookup-cost-probe.ts <edge keyspace> <rows keyspace> [--lookups 30000] [--rounds 3] [--spin 10]
 *     On the same random (key, time) pairs: the bare floor SELECT on the rows table (the bench's baseline), the
 *     library's own edge CQL sent by that bare client (`prev <= ? LIMIT 2`, four columns), the library's get and
 *     getValue (compiled, as the bench loads it), and the bare SELECT with `--spin` µs of client CPU burnt after each
 *     answer (does a slower client cost Cassandra more per request?). Rounds in rotated order; Cassandra CPU per lookup.
 *
 * The bench names the two keyspaces in its "SSTables read by the lookups" line (the edge table's has a `prev` column).
 * Pin first for steady figures, as for validto-probes.ts.
 */
import { Client, types } from 'cassandra-driver';
import { compiledLookupLibrary } from '../phases/lookups';
import { compareLookups, flag, lcg, OPTS, runMain } from './probe-kit';
import { benchCassandra } from '../infra';

const KEYS = 10_000;
const TABLE = 'bench_store_g1';

function burn(micros: number): void {
  const end = process.hrtime.bigint() + BigInt(Math.round(micros * 1000));
  while (process.hrtime.bigint() < end);
}

async function timeRange(c: Client, keyspace: string): Promise<{ lo: number; hi: number }> {
  const rs = await c.execute(`SELECT valid_from FROM ${keyspace}.${TABLE} LIMIT 5000`);
  const ts = rs.rows.map((r) => Number(r.valid_from));
  return { lo: Math.min(...ts), hi: Math.max(...ts) };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [edgeKs, rowsKs] = args;
  if (!/^\w+$/.test(edgeKs ?? '') || !/^\w+$/.test(rowsKs ?? ''))
    throw new Error('usage: lookup-cost-probe.ts <edge keyspace> <rows keyspace> [--lookups N] [--rounds R] [--spin µs]');
  const lookups = flag(args, '--lookups', 30_000);
  const spin = flag(args, '--spin', 10);
  const c = await benchCassandra();
  const { lib } = await compiledLookupLibrary();
  const lookup = await lib.openLookup({ client: c, keyspace: edgeKs });
  const store = lookup.store<string, unknown>('bench_store');
  const { lo, hi } = await timeRange(c, rowsKs);
  const rnd = lcg(7);
  const keyStrings = Array.from({ length: KEYS }, (_, k) => `k${String(k).padStart(6, '0')}`);
  const keyBytes = keyStrings.map((k) => Buffer.from(k));
  const qk = Array.from({ length: lookups }, () => Math.floor(rnd() * KEYS));
  const qt = Array.from({ length: lookups }, () => lo + Math.floor(rnd() * (hi - lo)));
  const bare = `SELECT valid_from, value FROM ${rowsKs}.${TABLE} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const edge = `SELECT prev, valid_from, value, writer FROM ${edgeKs}.${TABLE} WHERE key = ? AND prev <= ? LIMIT 2`;
  const params = (i: number) => [keyBytes[qk[i]], types.Long.fromNumber(qt[i])];
  await compareLookups(
    {
      'bare SELECT': (i) => c.execute(bare, params(i), OPTS),
      'edge CQL': (i) => c.execute(edge, params(i), OPTS),
      'library get': (i) => store.get(keyStrings[qk[i]], qt[i]),
      'library value': (i) => store.getValue(keyStrings[qk[i]], qt[i]),
      [`bare +${spin} µs`]: (i) => c.execute(bare, params(i), OPTS).then(() => burn(spin)),
    },
    lookups,
    'bare SELECT',
    undefined,
    undefined,
    flag(args, '--rounds', 3),
  );
  await lookup.close();
  await c.shutdown();
}

runMain(main);
