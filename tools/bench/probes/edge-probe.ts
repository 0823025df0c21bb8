/**
 * Probe behind issue #13's lookup target: rows clustered by their *predecessor's* time ("edges"), so that one slice
 * answers an as-of get with its validTo, and no row is ever updated.
 *
 *   npx tsx tools/bench/probes/edge-probe.ts [--records 1000000] [--ring 8] [--rounds 3] [--lookups 30000] [--check 3000]
 *     [--blob] [--attribute]
 *
 * Layout `edge`: `PRIMARY KEY ((key), prev, valid_from, writer)`, clustered `(prev DESC, valid_from ASC)`. Each version
 * is written once, as the row `(prev, valid_from)` where `prev` is the key's version before it when it is written
 * (Long.MIN for a key's first). A late version t between a and b writes `(a, t)` with its value and a value-less marker
 * `(t, b)`; the row `(a, b)` stays (stale rows only lengthen scans). Every adjacent pair of versions then has its row,
 * and for any asOf the slice `prev <= asOf` starts with the row of the floor's successor (or with the floor's own row when
 * the floor is the newest version): its first row gives validTo, and the floor's value is in the first following row whose
 * `valid_from` is the floor and that carries a value.
 *
 * Replays the bench's data set (10k keys, 5% out of order, 6 partitions) in chunks of 64 × 17 statements sorted by key,
 * against `plain` (today's rows: `(valid_from DESC, writer)`, one INSERT per record). A writer keeps each key's newest
 * `--ring` version times; a key seen first, or a late version older than its ring, costs one read on the write path
 * (timed with the batches). Then lookups: the bare floor SELECT on `plain` (a hand-written client's own layout) against
 * the edge read (`LIMIT 4`; a second read only when the floor's value is not in those rows), checked against the
 * data set for `--check` queries. `--blob` adds `edgeblob`, the whole layout clustered by one 16-byte blob, written,
 * checked and read like `edge`. `--attribute` adds `edgebare`: the edge rows alone, without markers or reads.
 * Pin first (`taskset -a -p -c 0` on Cassandra and Kafka, the probe under `taskset -c 1`).
 */
import { Client, types } from 'cassandra-driver';
import { benchCassandra } from '../infra';
import { type Dataset } from '../dataset';
import { compareLookups, compareWritePlans, flag, lcg, OPTS, type PlanStatement, probeRun, runMain } from './probe-kit';
import { lowerBound } from '../../../src/store/cassandra/version-edges';

type Stmt = PlanStatement;
type Plan = { stmts: Stmt[]; reads: number; markers: number };

const T = (v: string) => `probe.e_${v}`;
const long = types.Long.fromNumber;
const MIN = types.Long.MIN_VALUE;
const WRITER = 'probe:0';

/** Every key's versions, sorted (the data set's truth; also what the edge plan needs to know of each key). */
function versionsOf(d: Dataset): { times: number[][]; valueAt: Map<string, Buffer> } {
  const times: number[][] = Array.from({ length: d.keyStrings.length }, () => []);
  const valueAt = new Map<string, Buffer>();
  for (let i = 0; i < d.size; i++) {
    const k = d.keyIdx[i];
    const at = lowerBound(times[k], d.ts[i]);
    if (times[k][at] !== d.ts[i]) times[k].splice(at, 0, d.ts[i]);
    valueAt.set(`${k}:${d.ts[i]}`, d.values[i]);
  }
  return { times, valueAt };
}

function planPlain(d: Dataset): Plan {
  const q = `INSERT INTO ${T('plain')} (key, valid_from, value, writer) VALUES (?, ?, ?, ?)`;
  const stmts: Stmt[] = [];
  for (let i = 0; i < d.size; i++) {
    const k = d.keyIdx[i];
    stmts.push({ query: q, params: [d.keyBytes[k], long(d.ts[i]), d.values[i], WRITER], key: k });
  }
  return { stmts, reads: 0, markers: 0 };
}

/**
 * The edge plan (see the file comment); reads count what a writer keeping `ring` version times per key would read.
 * `bare` (table `edgebare`, for the attribution only; its reads would be wrong) writes the same rows without markers and
 * without reads: what the extra clustering value alone costs. `blob` (table `edgeblob`) is the whole layout with
 * `(prev, valid_from)` clustered as one 16-byte blob.
 */
function planEdge(d: Dataset, ring: number, mode: 'edge' | 'bare' | 'blob' = 'edge'): Plan {
  const bare = mode === 'bare';
  const table = T(mode === 'edge' ? 'edge' : mode === 'bare' ? 'edgebare' : 'edgeblob');
  const row =
    mode === 'blob'
      ? `INSERT INTO ${table} (key, edge, value, writer) VALUES (?, ?, ?, ?)`
      : `INSERT INTO ${table} (key, prev, valid_from, value, writer) VALUES (?, ?, ?, ?, ?)`;
  const marker =
    mode === 'blob'
      ? `INSERT INTO ${table} (key, edge, writer) VALUES (?, ?, ?)`
      : `INSERT INTO ${table} (key, prev, valid_from, writer) VALUES (?, ?, ?, ?)`;
  const clustering = (prev: number, from: number): unknown[] =>
    mode === 'blob' ? [edgeKey(prev, from)] : [prev === Number.NEGATIVE_INFINITY ? MIN : long(prev), long(from)];
  const known: number[][] = Array.from({ length: d.keyStrings.length }, () => []);
  const stmts: Stmt[] = [];
  let reads = 0;
  let markers = 0;
  for (let i = 0; i < d.size; i++) {
    const k = d.keyIdx[i];
    const t = d.ts[i];
    const v = known[k];
    if (v.length === 0 && !bare) reads++; // a key seen first: its newest stored version is read
    const at = lowerBound(v, t);
    if (at < v.length - ring && !bare) reads++; // older than the ring: its neighbours are read
    const prev = at > 0 ? v[at - 1] : Number.NEGATIVE_INFINITY;
    stmts.push({ query: row, params: [d.keyBytes[k], ...clustering(prev, t), d.values[i], WRITER], key: k });
    if (v[at] === t) continue; // a rewrite of an existing version: its row is replaced
    if (at < v.length && !bare) {
      stmts.push({ query: marker, params: [d.keyBytes[k], ...clustering(t, v[at]), WRITER], key: k });
      markers++;
    }
    v.splice(at, 0, t);
  }
  return { stmts, reads, markers };
}

/** 16 bytes ordering as (prev DESC, valid_from ASC): one blob clustering value instead of two bigints. */
function edgeKey(prev: number, from: number): Buffer {
  const b = Buffer.alloc(16);
  const sign = 1n << 63n;
  const p = prev === Number.NEGATIVE_INFINITY ? -sign : BigInt(prev);
  b.writeBigUInt64BE((1n << 64n) - 1n - ((p + sign) & ((1n << 64n) - 1n)), 0);
  b.writeBigUInt64BE(BigInt(from) + sign, 8);
  return b;
}

async function createTable(c: Client, v: string): Promise<void> {
  await c.execute(`DROP TABLE IF EXISTS ${T(v)}`);
  if (v === 'edgeblob') {
    await c.execute(
      `CREATE TABLE ${T(v)} (key blob, edge blob, value blob, writer text, PRIMARY KEY ((key), edge, writer)) WITH CLUSTERING ORDER BY (edge ASC, writer ASC)`,
    );
    return;
  }
  await c.execute(
    v.startsWith('edge')
      ? `CREATE TABLE ${T(v)} (key blob, prev bigint, valid_from bigint, value blob, writer text, PRIMARY KEY ((key), prev, valid_from, writer)) WITH CLUSTERING ORDER BY (prev DESC, valid_from ASC, writer ASC)`
      : `CREATE TABLE ${T(v)} (key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((key), valid_from, writer)) WITH CLUSTERING ORDER BY (valid_from DESC, writer ASC)`,
  );
}

type Answer = { from: number; to: number | null; value: Buffer } | null;

/** The edge read: one slice, a second only when the floor's value is not in its first rows. */
async function edgeGet(c: Client, key: Buffer, asOf: number, onSecond: () => void): Promise<Answer> {
  const first = `SELECT prev, valid_from, value FROM ${T('edge')} WHERE key = ? AND prev <= ? LIMIT 4`;
  let rows = (await c.execute(first, [key, long(asOf)], OPTS)).rows;
  if (rows.length === 0) return null;
  const a = rows[0];
  const aFrom = (a.valid_from as types.Long).toNumber();
  const newest = aFrom <= asOf;
  if (!newest && (a.prev as types.Long).equals(MIN)) return null;
  const from = newest ? aFrom : (a.prev as types.Long).toNumber();
  const to = newest ? null : aFrom;
  const find = () => rows.find((r) => (r.valid_from as types.Long).toNumber() === from && r.value !== null);
  let hit = find();
  if (hit === undefined) {
    onSecond();
    rows = (
      await c.execute(`SELECT prev, valid_from, value FROM ${T('edge')} WHERE key = ? AND prev < ? LIMIT 64`, [key, long(from)], OPTS)
    ).rows;
    hit = find();
  }
  if (hit === undefined) throw new Error(`no value row for version ${from}`);
  return { from, to, value: hit.value as Buffer };
}

/** The edge read on the blob table: the same rule, `(prev, valid_from)` decoded from the 16-byte clustering value. */
async function edgeGetBlob(c: Client, key: Buffer, asOf: number, onSecond: () => void): Promise<Answer> {
  const sign = 1n << 63n;
  const decode = (e: Buffer) => {
    const p = (1n << 64n) - 1n - e.readBigUInt64BE(0) - sign;
    return { prev: p === -sign ? Number.NEGATIVE_INFINITY : Number(p), from: Number(e.readBigUInt64BE(8) - sign) };
  };
  const q = (op: string, limit: number) => `SELECT edge, value FROM ${T('edgeblob')} WHERE key = ? AND edge ${op} ? LIMIT ${limit}`;
  let rows = (await c.execute(q('>=', 4), [key, edgeKey(asOf, -(2 ** 63))], OPTS)).rows;
  if (rows.length === 0) return null;
  const a = decode(rows[0].edge as Buffer);
  const newest = a.from <= asOf;
  if (!newest && a.prev === Number.NEGATIVE_INFINITY) return null;
  const from = newest ? a.from : a.prev;
  const find = () => rows.find((r) => decode(r.edge as Buffer).from === from && r.value !== null);
  let hit = find();
  if (hit === undefined) {
    onSecond();
    const past = edgeKey(from, 0);
    past.fill(0xff, 8); // after every row under `from`: the rows under earlier versions
    rows = (await c.execute(q('>', 64), [key, past], OPTS)).rows;
    hit = find();
  }
  if (hit === undefined) throw new Error(`no value row for version ${from}`);
  return { from, to: newest ? null : a.from, value: hit.value as Buffer };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const run = probeRun(args);
  const { lookups, d } = run;
  const plans: Record<string, Plan> = { plain: planPlain(d), edge: planEdge(d, flag(args, '--ring', 8)) };
  if (args.includes('--attribute')) {
    plans.edgebare = planEdge(d, 0, 'bare');
  }
  if (args.includes('--blob')) {
    plans.edgeblob = planEdge(d, flag(args, '--ring', 8), 'blob');
  }
  const c = await benchCassandra();
  try {
    await compareWritePlans(c, {
      ...run,
      plans,
      describe: (v) => `${plans[v].markers} markers, ${plans[v].reads} reads`,
      create: (v) => createTable(c, v),
      read: (v, batch) =>
        c.execute(
          v === 'edgeblob'
            ? `SELECT edge FROM ${T(v)} WHERE key = ? AND edge >= ? LIMIT 2`
            : `SELECT prev, valid_from FROM ${T(v)} WHERE key = ? AND prev <= ? LIMIT 2`,
          [d.keyBytes[batch[0].key], v === 'edgeblob' ? edgeKey(d.maxTs, -(2 ** 63)) : long(d.maxTs)],
          OPTS,
        ),
    });
    if (lookups > 0) await lookupsOnEdges(c, d, lookups, flag(args, '--check', 3000), 'edgeblob' in plans);
    await c.execute('DROP KEYSPACE IF EXISTS probe');
  } finally {
    await c.shutdown();
  }
}

/** Checks the edge read against the data set, then times it against the bare floor SELECT on the plain table. */
async function lookupsOnEdges(c: Client, d: Dataset, lookups: number, check: number, blob: boolean): Promise<void> {
  const rnd = lcg(7);
  const qs = Array.from({ length: lookups }, () => ({
    k: Math.floor(rnd() * d.keyBytes.length),
    t: d.minTs - 5 + Math.floor(rnd() * (d.maxTs - d.minTs + 10)),
  }));
  const truth = versionsOf(d);
  let mismatches = 0;
  let second = 0;
  for (const q of qs.slice(0, check)) {
    const v = truth.times[q.k];
    const at = lowerBound(v, q.t + 1) - 1;
    const want = at < 0 ? null : { from: v[at], to: at + 1 < v.length ? v[at + 1] : null };
    const same = (got: Answer) =>
      want === null
        ? got === null
        : got !== null && got.from === want.from && got.to === want.to && got.value.equals(truth.valueAt.get(`${q.k}:${want.from}`)!);
    if (!same(await edgeGet(c, d.keyBytes[q.k], q.t, () => second++))) mismatches++;
    if (blob && !same(await edgeGetBlob(c, d.keyBytes[q.k], q.t, () => undefined))) mismatches++;
  }
  console.log(`checked ${Math.min(check, lookups)} edge reads against the data set: ${mismatches} mismatches, ${second} second reads`);
  const bare = `SELECT valid_from, value, writer FROM ${T('plain')} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const next = `SELECT valid_from FROM ${T('plain')} WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1`;
  second = 0;
  await compareLookups(
    {
      floor: (i) => c.execute(bare, [d.keyBytes[qs[i].k], long(qs[i].t)], OPTS),
      'edge get': (i) => edgeGet(c, d.keyBytes[qs[i].k], qs[i].t, () => second++),
      ...(blob ? { 'blob get': (i: number) => edgeGetBlob(c, d.keyBytes[qs[i].k], qs[i].t, () => undefined) } : {}),
      pair: (i) => {
        const p = [d.keyBytes[qs[i].k], long(qs[i].t)];
        return Promise.all([c.execute(bare, p, OPTS), c.execute(next, p, OPTS)]);
      },
    },
    lookups,
    'floor',
    (n) => (n === 'edge get' ? `, second read for ${((second / lookups) * 100).toFixed(2)}%` : ''),
    () => (second = 0),
  );
}

runMain(main);
