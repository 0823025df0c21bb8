/**
 * Probe behind issue #13's lookup target: the *backward link* layout, clustered ASC, on the local stack.
 *
 * Each row carries its key's previous version (`prev_from`, `prev_value`, `prev_writer`), written with the row itself
 * (the writer knows a key's newest version when it writes the next one; no UPDATE, no hold). On a table clustered
 * `valid_from ASC`, the row *after* asOf is the first row of a forward slice, and it holds both validTo (its own
 * `valid_from`) and the version as of asOf (its link): one forward read. asOf at or after a key's newest version
 * finds no such row and falls back to the floor read (a reversed slice on this clustering).
 *
 *   npx tsx tools/bench/probes/backlink-probe.ts reads [--versions 100] [--lookups 30000] [--rounds 5] [--matrix]
 *     All tables filled with the same 10,000 keys × versions: the bare floor SELECT on `plain` (the baseline a
 *     hand-written client would run on its own best layout), the pair `get` issues today on `plain`, and the
 *     backward-link read on `backlink` and on `thin` (rows without their own value: it lives in the next row's link,
 *     the newest one in static cells). `--matrix` swaps the pair and `thin` for reads that split the link read's
 *     cost into its columns and its slice.
 *
 * Its write cost was not probed: the read alone (0.73–0.78 of the bare floor, README round 17) rules the layout out.
 * Pin first for steady figures, as for validto-probes.ts.
 */
import { Client, types } from 'cassandra-driver';
import { runPool } from '../pool';
import { compareLookups, CONCURRENCY, createProbeKeyspace, flag, lcg, OPTS, runProbe } from './probe-kit';

const KEYS = 10_000;
const long = types.Long.fromNumber;
const keys = Array.from({ length: KEYS }, (_, i) => Buffer.from(`k${String(i).padStart(6, '0')}`));
const value = (j: number) => Buffer.from(`{"id":${j},"payload":"${'x'.repeat(180)}"}`);

type Kind = 'plain' | 'backlink' | 'thin';

function ddl(t: string, kind: Kind): string {
  const statics = kind === 'thin' ? 'latest_from bigint static, latest_value blob static, latest_writer text static, ' : '';
  const link = kind !== 'plain' ? `prev_from bigint, prev_value blob, prev_writer text, ${statics}` : '';
  const order = kind !== 'plain' ? 'ASC' : 'DESC';
  return `CREATE TABLE ${t} (key blob, valid_from bigint, value blob, writer text, ${link}PRIMARY KEY ((key), valid_from)) WITH CLUSTERING ORDER BY (valid_from ${order})`;
}

function insertCql(t: string, kind: Kind): string {
  if (kind === 'thin')
    return `INSERT INTO ${t} (key, valid_from, writer, prev_from, prev_value, prev_writer, latest_from, latest_value, latest_writer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  return kind === 'backlink'
    ? `INSERT INTO ${t} (key, valid_from, value, writer, prev_from, prev_value, prev_writer) VALUES (?, ?, ?, ?, ?, ?, ?)`
    : `INSERT INTO ${t} (key, valid_from, value, writer) VALUES (?, ?, ?, ?)`;
}

/** Params of one row: version j of key k, linked to version j-1 (none for the first: prev_from -1). */
function params(kind: Kind, k: number, from: number, v: Buffer, prev: { from: number; v: Buffer } | undefined): unknown[] {
  // thin: the row's own value lives in the next row's link, the newest one in the partition's static cells.
  if (kind === 'thin')
    return [keys[k], long(from), 'probe:0', long(prev?.from ?? -1), prev?.v ?? null, prev ? 'probe:0' : null, long(from), v, 'probe:0'];
  const row = [keys[k], long(from), v, 'probe:0'];
  if (kind === 'plain') return row;
  return [...row, long(prev?.from ?? -1), prev?.v ?? null, prev ? 'probe:0' : null];
}

async function reads(c: Client, args: string[]): Promise<void> {
  const perKey = flag(args, '--versions', 100);
  const lookups = flag(args, '--lookups', 30_000);
  await createProbeKeyspace(c);
  const base = 1_700_000_000_000;
  const rows = KEYS * perKey;
  for (const kind of ['plain', 'backlink', 'thin'] as const) {
    const t = `probe.r_${kind}`;
    await c.execute(`DROP TABLE IF EXISTS ${t}`);
    await c.execute(ddl(t, kind));
    const insert = insertCql(t, kind);
    // Version j of key k at base + j * 10 s + k ms; rows of one key share a batch 17 at a time, in version order.
    await runPool(Math.ceil(rows / 17), CONCURRENCY, async (b) => {
      const queries: { query: string; params: unknown[] }[] = [];
      for (let i = b * 17; i < Math.min(rows, b * 17 + 17); i++) {
        const k = Math.floor(i / perKey);
        const j = i % perKey;
        const prev = j > 0 ? { from: base + (j - 1) * 10_000 + k, v: value(j - 1) } : undefined;
        queries.push({ query: insert, params: params(kind, k, base + j * 10_000 + k, value(j), prev) });
      }
      await c.batch(queries, { ...OPTS, logged: false });
    });
    await c.execute(`SELECT key FROM ${t} LIMIT 1`);
    console.log(`filled ${t}: ${rows} rows`);
  }
  const rnd = lcg(11);
  const qs = Array.from({ length: lookups }, () => ({ k: keys[Math.floor(rnd() * KEYS)], t: base + Math.floor(rnd() * perKey * 10_000) }));
  const floor = `SELECT valid_from, value, writer FROM probe.r_plain WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const bare = `SELECT valid_from, value FROM probe.r_plain WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const next = `SELECT valid_from FROM probe.r_plain WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1`;
  const after = `SELECT valid_from, prev_from, prev_value, prev_writer FROM probe.r_backlink WHERE key = ? AND valid_from > ? LIMIT 1`;
  const blFloor = `SELECT valid_from, value, writer FROM probe.r_backlink WHERE key = ? AND valid_from <= ? ORDER BY valid_from DESC LIMIT 1`;
  const thinAfter = `SELECT valid_from, prev_from, prev_value, prev_writer FROM probe.r_thin WHERE key = ? AND valid_from > ? LIMIT 1`;
  const thinLatest = `SELECT latest_from, latest_value, latest_writer FROM probe.r_thin WHERE key = ? LIMIT 1`;
  let fallbacks = 0;
  let mismatches = 0;
  const kinds: Record<string, (i: number) => Promise<unknown>> = {
    'bare floor': (i) => c.execute(bare, [qs[i].k, long(qs[i].t)], OPTS),
    pair: (i) => Promise.all([c.execute(floor, [qs[i].k, long(qs[i].t)], OPTS), c.execute(next, [qs[i].k, long(qs[i].t)], OPTS)]),
    backlink: async (i) => {
      const row = (await c.execute(after, [qs[i].k, long(qs[i].t)], OPTS)).first();
      if (row !== null && Number(row.prev_from) < 0) return null; // asOf before the key's first version
      if (row !== null) return { from: Number(row.prev_from), value: row.prev_value as Buffer, validTo: Number(row.valid_from) };
      fallbacks++;
      return (await c.execute(blFloor, [qs[i].k, long(qs[i].t)], OPTS)).first();
    },
    thin: async (i) => {
      const row = (await c.execute(thinAfter, [qs[i].k, long(qs[i].t)], OPTS)).first();
      if (row !== null && Number(row.prev_from) < 0) return null;
      if (row !== null) return { from: Number(row.prev_from), value: row.prev_value as Buffer, validTo: Number(row.valid_from) };
      fallbacks++;
      const l = (await c.execute(thinLatest, [qs[i].k], OPTS)).first();
      return l === null || Number(l.latest_from) > qs[i].t ? null : { from: Number(l.latest_from), value: l.latest_value as Buffer };
    },
  };
  if (args.includes('--matrix')) {
    // Where the link read's cost comes from: the columns selected, or the slice itself.
    const bl2 = `SELECT valid_from, prev_value FROM probe.r_backlink WHERE key = ? AND valid_from > ? LIMIT 1`;
    const blOwn = `SELECT valid_from, value FROM probe.r_backlink WHERE key = ? AND valid_from > ? LIMIT 1`;
    kinds['floor+writer'] = (i) => c.execute(floor, [qs[i].k, long(qs[i].t)], OPTS);
    kinds['backlink 2 cols'] = (i) => c.execute(bl2, [qs[i].k, long(qs[i].t)], OPTS);
    kinds['backlink own'] = (i) => c.execute(blOwn, [qs[i].k, long(qs[i].t)], OPTS);
    delete kinds.pair;
    delete kinds.thin;
  }
  // Correctness of the link read against the pair, on the first 2,000 queries (fewer when fewer are asked).
  const checked = Math.min(2000, lookups);
  for (let i = 0; i < checked; i++) {
    const [f, n] = await Promise.all([c.execute(floor, [qs[i].k, long(qs[i].t)], OPTS), c.execute(next, [qs[i].k, long(qs[i].t)], OPTS)]);
    const got = (await kinds.backlink(i)) as { from?: number; valid_from?: unknown; validTo?: number } | null;
    const wantFrom = f.first() ? Number(f.first().valid_from) : undefined;
    const gotFrom = got === null ? undefined : (got.from ?? Number(got.valid_from));
    const wantTo = n.first() ? Number(n.first().valid_from) : undefined;
    if (wantFrom !== gotFrom || (got !== null && got.validTo !== wantTo)) mismatches++;
    if (!kinds.thin) continue;
    const thin = (await kinds.thin(i)) as { from: number; validTo?: number } | null;
    if (wantFrom !== thin?.from || (thin !== null && thin.validTo !== wantTo)) mismatches++;
  }
  console.log(`link reads vs pair on ${checked} queries: ${mismatches} mismatches`);
  const share = (n: string) => (n === 'backlink' || n === 'thin' ? `, fell back for ${((fallbacks / lookups) * 100).toFixed(1)}%` : '');
  await compareLookups(kinds, lookups, 'bare floor', share, () => (fallbacks = 0), flag(args, '--rounds', 5));
  await c.execute('DROP KEYSPACE IF EXISTS probe');
}

runProbe({ reads }, 'backlink-probe.ts reads [--versions V] [--lookups N] [--rounds R] [--matrix]');
