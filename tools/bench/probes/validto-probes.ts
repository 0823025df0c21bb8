/**
 * Probes behind issue #13's lookup target (an as-of get with validTo at ≥ 0.9 of one bare SELECT), on the local stack:
 *
 *   npx tsx tools/bench/probes/validto-probes.ts writes [--rows 200000] [--rounds 4]
 *     Cassandra CPU per row of UNLOGGED batches (17 rows, grouped by key as the worker's batcher does) for the layouts
 *     that would make an as-of get with validTo one read: `plain` (today's rows), `link` (an `UPDATE … SET valid_to` of
 *     the key's previous version in the same batch) and `set` (a static `versions set<bigint>` every INSERT adds to).
 *   npx tsx tools/bench/probes/validto-probes.ts window <keyspace> [--table bench_store_g1] [--lookups 30000]
 *     On a table the bench filled (`npm run bench -- --phases adjunct --rounds 1 --keep --no-record`): one floor
 *     SELECT, the floor + next pair `get` issues, and a "window" read (`valid_from <= asOf + w LIMIT 4`, which finds both
 *     when a version lies within w above asOf, else falls back to the next read or the pair), for several w.
 *   npx tsx tools/bench/probes/validto-probes.ts linked-read [--versions 100] [--lookups 30000]
 *     A table whose rows carry exact `valid_to` links and a static set of late versions' times: the floor read that
 *     would return validTo in one request, against the bare floor read on the same table.
 *
 * Pin first for steady figures (`taskset -a -p -c 0` on the stack's Cassandra and Kafka pids, the probe under
 * `taskset -c 1`). Rounds run in rotated order; Cassandra's CPU comes from /proc (server-cpu.ts).
 */
import { Client, types } from 'cassandra-driver';
import { runPool } from '../pool';
import { median } from '../stats';
import { compareLookups, CONCURRENCY, createProbeKeyspace, flag, lcg, OPTS, runProbe, timed } from './probe-kit';

/** Write cost of the one-read layouts (see the file comment). */
async function writes(c: Client, args: string[]): Promise<void> {
  const rows = flag(args, '--rows', 200_000);
  const rounds = flag(args, '--rounds', 4);
  const keys = Array.from({ length: 10_000 }, (_, i) => Buffer.from(`key-${i}`));
  const rnd = lcg(3);
  const order = Array.from({ length: rows }, () => Math.floor(rnd() * keys.length));
  // The worker's batcher sorts what is staged (about 64 batches) by partition: do the same per 1,088 rows.
  for (let a = 0; a < rows; a += 1088) order.splice(a, Math.min(1088, rows - a), ...order.slice(a, a + 1088).sort((x, y) => x - y));
  const value = Buffer.alloc(200, 7);
  const base = 1_700_000_000_000;
  await createProbeKeyspace(c);
  const variants = ['plain', 'link', 'set'] as const;
  const cpu: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < variants.length; j++) {
      const v = variants[(j + round) % variants.length];
      const t = `probe.w_${v}`;
      await c.execute(`DROP TABLE IF EXISTS ${t}`);
      const extra = v === 'set' ? 'versions set<bigint> static, ' : v === 'link' ? 'valid_to bigint, ' : '';
      await c.execute(
        `CREATE TABLE ${t} (key blob, valid_from bigint, value blob, writer text, ${extra}PRIMARY KEY ((key), valid_from)) WITH CLUSTERING ORDER BY (valid_from DESC)`,
      );
      const insert =
        v === 'set'
          ? `INSERT INTO ${t} (key, valid_from, value, writer, versions) VALUES (?, ?, ?, ?, ?)`
          : `INSERT INTO ${t} (key, valid_from, value, writer) VALUES (?, ?, ?, ?)`;
      const link = `UPDATE ${t} SET valid_to = ? WHERE key = ? AND valid_from = ?`;
      const latest = new Map<number, number>();
      const batches = Math.ceil(rows / 17);
      const r = await timed(batches, async (b) => {
        const queries: { query: string; params: unknown[] }[] = [];
        for (let i = b * 17; i < Math.min(rows, b * 17 + 17); i++) {
          const k = order[i];
          const ts = types.Long.fromNumber(base + i * 10);
          queries.push({ query: insert, params: v === 'set' ? [keys[k], ts, value, 'probe:0', [ts]] : [keys[k], ts, value, 'probe:0'] });
          const prev = latest.get(k);
          if (v === 'link' && prev !== undefined) queries.push({ query: link, params: [ts, keys[k], types.Long.fromNumber(prev)] });
          latest.set(k, base + i * 10);
        }
        await c.batch(queries, { ...OPTS, logged: false });
      });
      (cpu[v] ??= []).push(r.cpuMicros * (batches / rows));
      console.log(
        `round ${round} ${v.padEnd(5)} ${Math.round((r.rate * rows) / batches)} rows/s, Cassandra ${((r.cpuMicros * batches) / rows).toFixed(1)} µs/row`,
      );
    }
  }
  await c.execute('DROP KEYSPACE IF EXISTS probe');
  for (const v of variants)
    console.log(`${v.padEnd(5)} median Cassandra µs/row ${median(cpu[v]).toFixed(1)} (${cpu[v].map((x) => x.toFixed(1)).join(', ')})`);
}

/** Read cost of the floor read, the pair and window reads (see the file comment). */
async function window(c: Client, args: string[]): Promise<void> {
  const ks = args[0];
  const ti = args.indexOf('--table');
  const t = `${ks}.${ti >= 0 ? args[ti + 1] : 'bench_store_g1'}`;
  const lookups = flag(args, '--lookups', 30_000);
  const keys: Buffer[] = [];
  for (const r of (await c.execute(`SELECT DISTINCT key FROM ${t}`, [], { fetchSize: 20_000 })).rows) keys.push(r.key as Buffer);
  const span = (await c.execute(`SELECT min(valid_from) AS lo, max(valid_from) AS hi FROM ${t} WHERE key = ?`, [keys[0]], OPTS)).first();
  const lo = Number(span.lo);
  const hi = Number(span.hi);
  const rnd = lcg(7);
  const qs = Array.from({ length: lookups }, () => ({ k: keys[Math.floor(rnd() * keys.length)], t: lo + Math.floor(rnd() * (hi - lo)) }));
  const floor = `SELECT valid_from, value, writer FROM ${t} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const next = `SELECT valid_from FROM ${t} WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1`;
  const win = `SELECT valid_from, value, writer FROM ${t} WHERE key = ? AND valid_from <= ? LIMIT 4`;
  const long = types.Long.fromNumber;
  const pair = (i: number) =>
    Promise.all([c.execute(floor, [qs[i].k, long(qs[i].t)], OPTS), c.execute(next, [qs[i].k, long(qs[i].t)], OPTS)]);
  const kinds: Record<string, (i: number) => Promise<unknown>> = {
    floor: (i) => c.execute(floor, [qs[i].k, long(qs[i].t)], OPTS),
    pair,
  };
  // The mean time between a key's versions, from 20 keys' version counts.
  let versions = 0;
  for (const k of keys.slice(0, 20))
    versions += Number((await c.execute(`SELECT count(*) AS n FROM ${t} WHERE key = ?`, [k], OPTS)).first().n);
  const meanGap = (hi - lo) / Math.max(1, versions / Math.min(20, keys.length));
  console.log(
    `${keys.length} keys, ${(versions / Math.min(20, keys.length)).toFixed(0)} versions per key, mean gap ${Math.round(meanGap)} ms`,
  );
  for (const m of [1, 1.5, 2, 3]) {
    const w = Math.round(m * meanGap);
    kinds[`window ${m}× gap`] = async (i) => {
      const rows = (await c.execute(win, [qs[i].k, long(qs[i].t + w)], OPTS)).rows;
      const at = rows.findIndex((r) => Number(r.valid_from) <= qs[i].t);
      if (at === 0) await c.execute(next, [qs[i].k, long(qs[i].t + w)], OPTS);
      else if (at < 0 && rows.length === 4) await pair(i);
    };
  }
  await compareLookups(kinds, lookups, 'floor');
}

/**
 * Read cost of a linked layout: rows carrying `valid_to` (the next version's time) and a static set of late versions'
 * times (a reader distrusts a link a late version fell inside), filled with exact links; one floor read that selects
 * them against the same read without them, on the same table.
 */
async function linkedRead(c: Client, args: string[]): Promise<void> {
  const keysN = 10_000;
  const perKey = flag(args, '--versions', 100);
  const lookups = flag(args, '--lookups', 30_000);
  const t = 'probe.linked';
  await createProbeKeyspace(c);
  await c.execute(`DROP TABLE IF EXISTS ${t}`);
  await c.execute(
    `CREATE TABLE ${t} (key blob, valid_from bigint, value blob, writer text, valid_to bigint, late set<bigint> static, PRIMARY KEY ((key), valid_from)) WITH CLUSTERING ORDER BY (valid_from DESC)`,
  );
  const keys = Array.from({ length: keysN }, (_, i) => Buffer.from(`key-${i}`));
  const value = Buffer.alloc(200, 7);
  const base = 1_700_000_000_000;
  const rnd = lcg(11);
  // Version j of key k at base + j * 10 s + k ms; about 5% of the versions are "late" (their time joins the key's set).
  const insert = `INSERT INTO ${t} (key, valid_from, value, writer, valid_to) VALUES (?, ?, ?, ?, ?)`;
  const lateAdd = `UPDATE ${t} SET late = late + ? WHERE key = ?`;
  const long = types.Long.fromNumber;
  const rows = keysN * perKey;
  await runPool(Math.ceil(rows / 17), CONCURRENCY, async (b) => {
    const queries: { query: string; params: unknown[] }[] = [];
    for (let i = b * 17; i < Math.min(rows, b * 17 + 17); i++) {
      const k = i % keysN;
      const j = Math.floor(i / keysN);
      const from = base + j * 10_000 + k;
      const to = j + 1 < perKey ? long(from + 10_000) : null;
      queries.push({ query: insert, params: [keys[k], long(from), value, 'probe:0', to] });
      if (rnd() < 0.05) queries.push({ query: lateAdd, params: [[long(from)], keys[k]] });
    }
    await c.batch(queries, { ...OPTS, logged: false });
  });
  console.log(`filled ${rows} rows`);
  const qs = Array.from({ length: lookups }, () => ({ k: keys[Math.floor(rnd() * keysN)], t: base + Math.floor(rnd() * perKey * 10_000) }));
  const bare = `SELECT valid_from, value FROM ${t} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const linked = `SELECT valid_from, value, writer, valid_to, late FROM ${t} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  let trusted = 0;
  const kinds: Record<string, (i: number) => Promise<unknown>> = {
    'bare floor': (i) => c.execute(bare, [qs[i].k, long(qs[i].t)], OPTS),
    'linked floor': async (i) => {
      const row = (await c.execute(linked, [qs[i].k, long(qs[i].t)], OPTS)).first();
      if (row === null || row.valid_to === null) return;
      const from = Number(row.valid_from);
      const to = Number(row.valid_to);
      const late = (row.late as types.Long[] | null) ?? [];
      if (!late.some((x) => Number(x) > from && Number(x) < to)) trusted++;
    },
  };
  const share = (n: string) => (n === 'linked floor' ? `, link trusted for ${((trusted / lookups) * 100).toFixed(1)}%` : '');
  await compareLookups(kinds, lookups, 'bare floor', share, () => (trusted = 0));
  await c.execute('DROP KEYSPACE IF EXISTS probe');
}

runProbe(
  {
    writes,
    window: (c, args) => (args[0] ? window(c, args) : Promise.reject(new Error('window needs a keyspace'))),
    'linked-read': linkedRead,
  },
  'validto-probes.ts writes [--rows N] [--rounds R] | window <keyspace> [--table T] [--lookups N] | linked-read',
);
