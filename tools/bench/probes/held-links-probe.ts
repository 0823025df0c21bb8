/**
 * Probe behind issue #13's lookup target: rows that carry their validTo (`valid_to`, the next version's time), written
 * without a second statement per record by holding each key's newest version until its next version arrives.
 *
 *   npx tsx tools/bench/probes/held-links-probe.ts [--records 1000000] [--hold 50000] [--ring 8] [--rounds 3]
 *     [--lookups 30000]
 *
 * Replays the bench's own data set (10k keys, 5% out of order, 6 partitions) as a worker would write it, in chunks of
 * 64 batches of 17 rows sorted by key, with three write plans:
 * - `plain`: one INSERT per record, no link (today's rows);
 * - `eager`: the same plus an `UPDATE … SET valid_to` of the key's previous version (a link per record);
 * - `held`: a key's newest version is held (at most `--hold` records, about 1 s at the bench's rate) and written with
 *   its link once the next version arrives; a version whose hold expired is written unlinked and linked by an UPDATE
 *   later; a late version is written with its successor's time from a ring of the key's last `--ring` version times,
 *   and its predecessor's link is cut by an UPDATE (a ring that does not reach back that far costs a read).
 * Then it reads the `held` table: the bare floor SELECT, the floor SELECT returning `valid_to` (one read; a second, the
 * next-version read, only when `valid_to` is null: the newest version or an unlinked one) and the floor + next pair.
 * Pin first (`taskset -a -p -c 0` on the stack's Cassandra and Kafka, the probe under `taskset -c 1`).
 */
import { Client, types } from 'cassandra-driver';
import { benchCassandra } from '../infra';
import { type Dataset } from '../dataset';
import { compareLookups, compareWritePlans, flag, lcg, OPTS, type PlanStatement, probeRun, runMain } from './probe-kit';

type Stmt = PlanStatement;
type Plan = { stmts: Stmt[]; reads: number; updates: number; unlinked: number };

const T = (v: string) => `probe.h_${v}`;
const long = types.Long.fromNumber;
const insertSql = (v: string) => `INSERT INTO ${T(v)} (key, valid_from, value, writer) VALUES (?, ?, ?, ?)`;
const linkedSql = (v: string) => `INSERT INTO ${T(v)} (key, valid_from, value, writer, valid_to) VALUES (?, ?, ?, ?, ?)`;
const linkSql = (v: string) => `UPDATE ${T(v)} SET valid_to = ? WHERE key = ? AND valid_from = ?`;

/** One INSERT per record, plus (eager) a link UPDATE of the key's previous version. */
function planEager(d: Dataset, v: 'plain' | 'eager'): Plan {
  const latest = new Float64Array(d.keyStrings.length).fill(Number.NaN);
  const stmts: Stmt[] = [];
  let updates = 0;
  for (let i = 0; i < d.size; i++) {
    const k = d.keyIdx[i];
    stmts.push({ query: insertSql(v), params: [d.keyBytes[k], long(d.ts[i]), d.values[i], 'probe:0'], key: k });
    if (v === 'eager' && latest[k] < d.ts[i]) {
      stmts.push({ query: linkSql(v), params: [long(d.ts[i]), d.keyBytes[k], long(latest[k])], key: k });
      updates++;
    }
    if (!(latest[k] >= d.ts[i])) latest[k] = d.ts[i];
  }
  return { stmts, reads: 0, updates, unlinked: 0 };
}

/** The held plan (see the file comment). */
function planHeld(d: Dataset, hold: number, ringSize: number): Plan {
  const v = 'held';
  const keys = d.keyStrings.length;
  const ring: number[][] = Array.from({ length: keys }, () => []);
  const held = new Int32Array(keys).fill(-1);
  const flushedUnlinked = new Uint8Array(keys);
  const heldQueue: number[] = [];
  let qHead = 0;
  const stmts: Stmt[] = [];
  let reads = 0;
  let updates = 0;
  let unlinked = 0;
  const write = (i: number, to: number | undefined) => {
    const k = d.keyIdx[i];
    const p = [d.keyBytes[k], long(d.ts[i]), d.values[i], 'probe:0'];
    stmts.push(to === undefined ? { query: insertSql(v), params: p, key: k } : { query: linkedSql(v), params: [...p, long(to)], key: k });
  };
  const link = (k: number, from: number, to: number) => {
    stmts.push({ query: linkSql(v), params: [long(to), d.keyBytes[k], long(from)], key: k });
    updates++;
  };
  for (let i = 0; i < d.size; i++) {
    // Hold expiry: versions held for `hold` records are written unlinked.
    while (qHead < heldQueue.length && heldQueue[qHead] <= i - hold) {
      const j = heldQueue[qHead++];
      const k = d.keyIdx[j];
      if (held[k] === j) {
        write(j, undefined);
        held[k] = -1;
        flushedUnlinked[k] = 1;
        unlinked++;
      }
    }
    const k = d.keyIdx[i];
    const t = d.ts[i];
    const r = ring[k];
    const newest = r.length ? r[r.length - 1] : Number.NEGATIVE_INFINITY;
    if (t > newest) {
      if (held[k] >= 0) write(held[k], t);
      else if (flushedUnlinked[k]) link(k, newest, t);
      flushedUnlinked[k] = 0;
      held[k] = i;
      heldQueue.push(i);
      r.push(t);
      if (r.length > ringSize) r.shift();
      continue;
    }
    // A late version (or a rewrite of an existing time): its successor and predecessor from the ring, else a read.
    const at = r.findIndex((x) => x >= t);
    if (r[at] === t) {
      write(i, at + 1 < r.length ? r[at + 1] : undefined);
      continue;
    }
    if (at === 0 && r.length === ringSize) reads++;
    write(i, r[at]);
    if (at > 0) link(k, r[at - 1], t);
    r.splice(at, 0, t);
    if (r.length > ringSize) r.shift();
  }
  for (let k = 0; k < keys; k++) if (held[k] >= 0) write(held[k], undefined);
  return { stmts, reads, updates, unlinked };
}

async function createTable(c: Client, v: string): Promise<void> {
  await c.execute(`DROP TABLE IF EXISTS ${T(v)}`);
  await c.execute(
    `CREATE TABLE ${T(v)} (key blob, valid_from bigint, value blob, writer text, valid_to bigint, PRIMARY KEY ((key), valid_from)) WITH CLUSTERING ORDER BY (valid_from DESC)`,
  );
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const run = probeRun(args);
  const { lookups, d } = run;
  const plans: Record<string, Plan> = {
    plain: planEager(d, 'plain'),
    eager: planEager(d, 'eager'),
    held: planHeld(d, flag(args, '--hold', 50_000), flag(args, '--ring', 8)),
  };
  const c = await benchCassandra();
  try {
    // A held plan's ring misses are reads on the write path: one floor read per miss.
    await compareWritePlans(c, {
      ...run,
      plans,
      describe: (v) => `${plans[v].updates} link UPDATEs, ${plans[v].reads} reads, ${plans[v].unlinked} held versions expired`,
      create: (v) => createTable(c, v),
      read: (v, batch) =>
        c.execute(
          `SELECT valid_from, valid_to FROM ${T(v)} WHERE key = ? AND valid_from <= ? LIMIT 1`,
          [d.keyBytes[batch[0].key], long(d.maxTs)],
          OPTS,
        ),
    });
    await readsOnHeld(c, d, lookups);
    await c.execute('DROP KEYSPACE IF EXISTS probe');
  } finally {
    await c.shutdown();
  }
}

/** Lookups on the held table the last round wrote: bare floor, one read with valid_to (next read only when it is null), the pair. */
async function readsOnHeld(c: Client, d: Dataset, lookups: number): Promise<void> {
  const rnd = lcg(7);
  const qs = Array.from({ length: lookups }, () => ({
    k: d.keyBytes[Math.floor(rnd() * d.keyBytes.length)],
    t: long(d.minTs + Math.floor(rnd() * (d.maxTs - d.minTs))),
  }));
  const t = T('held');
  const bare = `SELECT valid_from, value, writer FROM ${t} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const linked = `SELECT valid_from, value, writer, valid_to FROM ${t} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const next = `SELECT valid_from FROM ${t} WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1`;
  let second = 0;
  await compareLookups(
    {
      floor: (i) => c.execute(bare, [qs[i].k, qs[i].t], OPTS),
      'linked get': async (i) => {
        const row = (await c.execute(linked, [qs[i].k, qs[i].t], OPTS)).first();
        if (row !== null && row.valid_to === null) {
          second++;
          await c.execute(next, [qs[i].k, qs[i].t], OPTS);
        }
      },
      pair: (i) => Promise.all([c.execute(bare, [qs[i].k, qs[i].t], OPTS), c.execute(next, [qs[i].k, qs[i].t], OPTS)]),
    },
    lookups,
    'floor',
    (n) => (n === 'linked get' ? `, second read for ${((second / lookups) * 100).toFixed(1)}%` : ''),
    () => (second = 0),
  );
}

runMain(main);
