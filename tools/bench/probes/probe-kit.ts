/** Shared pieces of the issue #13 probes: flags, a deterministic PRNG, timed pools and interleaved lookup rounds. */
import { Client, types } from 'cassandra-driver';
import { generateDataset, type Dataset } from '../dataset';
import { benchCassandra } from '../infra';
import { stackSettings } from '../../devstack/endpoints';
import { interleavedRound } from '../interleaved';
import { runPool } from '../pool';
import { cassandraCpuSeconds, settleCassandra } from '../server-cpu';
import { median } from '../stats';

/** Statement options every probe request uses. */
export const OPTS = { prepare: true, isIdempotent: true, consistency: types.consistencies.localQuorum };
/** Requests in flight in every probe pool (64; `PROBE_CONCURRENCY` sets another positive integer). */
export const CONCURRENCY = probeConcurrency(process.env.PROBE_CONCURRENCY);

function probeConcurrency(text: string | undefined): number {
  if (text === undefined) return 64;
  const n = Number(text);
  // A pool of NaN or 0 lanes would run no request at all and print rates of nothing.
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`PROBE_CONCURRENCY must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** A flag's numeric value, or the default. */
export function flag(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
}

/** A small deterministic PRNG (the same queries in every run). */
export function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/** Runs `fn` timed: records per second and Cassandra CPU µs per item. */
export async function timed(count: number, fn: (i: number) => Promise<unknown>): Promise<{ rate: number; cpuMicros: number }> {
  const dir = stackSettings().stackDir;
  await settleCassandra(dir);
  const cpu0 = cassandraCpuSeconds(dir) ?? 0;
  const t0 = performance.now();
  await runPool(count, CONCURRENCY, fn);
  const ms = performance.now() - t0;
  return { rate: (count / ms) * 1000, cpuMicros: (((cassandraCpuSeconds(dir) ?? 0) - cpu0) / count) * 1e6 };
}

/**
 * Lookup kinds warmed up, then timed in `rounds` (3) interleaved rounds (interleavedRound: every kind sliced, the order
 * rotated every slice, on an idle Cassandra); prints each round (with `extra()`'s note, read after the round; each
 * probe's counters belong to one kind, reset by `beforeRound`) and each kind's median rate against `baseline`'s.
 */
export async function compareLookups(
  kinds: Record<string, (i: number) => Promise<unknown>>,
  lookups: number,
  baseline: string,
  extra: (name: string) => string = () => '',
  beforeRound: () => void = () => undefined,
  rounds = 3,
): Promise<void> {
  const list = Object.entries(kinds).map(([name, fn]) => ({ name, fn: async (i: number) => void (await fn(i)) }));
  for (const k of list) await runPool(Math.min(2000, lookups), CONCURRENCY, k.fn);
  const dir = stackSettings().stackDir;
  const rates: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    await settleCassandra(dir);
    beforeRound();
    const tallies = await interleavedRound(list, lookups, CONCURRENCY, round, dir);
    for (const { name } of list) {
      const t = tallies.get(name)!;
      const rate = (lookups / t.ms) * 1000;
      const cpu = t.server!.fields(lookups).serverCpuMicrosPerRecord as number | undefined;
      (rates[name] ??= []).push(rate);
      console.log(`round ${round} ${name.padEnd(14)} ${Math.round(rate)}/s, Cassandra ${(cpu ?? NaN).toFixed(1)} µs/lookup${extra(name)}`);
    }
  }
  for (const { name } of list) {
    const ratio = (median(rates[name]) / median(rates[baseline])).toFixed(2);
    console.log(`${name.padEnd(14)} median ${Math.round(median(rates[name]))}/s, ${ratio} of ${baseline}`);
  }
}

/** One row's statement of a write plan, and the key it belongs to (batches are grouped by key). */
export type PlanStatement = { query: string; params: unknown[]; key: number };

/** A write plan: every row's statement, and how many reads on the write path it needs. */
export interface WritePlan {
  stmts: PlanStatement[];
  reads: number;
}

/** Sorts each chunk of 64 × 17 statements by key and cuts it into 17-statement batches, as the worker's batcher does. */
export function planBatches(stmts: PlanStatement[]): PlanStatement[][] {
  const out: PlanStatement[][] = [];
  for (let a = 0; a < stmts.length; a += 1088) {
    const chunk = stmts.slice(a, a + 1088).sort((x, y) => x.key - y.key);
    for (let b = 0; b < chunk.length; b += 17) out.push(chunk.slice(b, b + 17));
  }
  return out;
}

/**
 * Writes each plan as UNLOGGED batches in `rounds` rounds of rotated order, each on a table `create(name)` makes afresh,
 * after an untimed warm-up with the first plan's first 200k rows (the first round otherwise meets a cold Cassandra). A
 * plan's reads on the write path (`read(name, batch)`) are spread evenly over its batches and timed with them. Prints
 * every round and each plan's median records/s and Cassandra µs per record. Creates the scratch keyspace first.
 */
export async function compareWritePlans(
  c: Client,
  run: {
    plans: Record<string, WritePlan>;
    records: number;
    rounds: number;
    /** What a plan writes besides its rows (printed after its statement count). */
    describe: (name: string) => string;
    create: (name: string) => Promise<void>;
    read: (name: string, batch: PlanStatement[]) => Promise<unknown>;
  },
): Promise<void> {
  const { plans, records, rounds, create, read } = run;
  for (const [v, p] of Object.entries(plans))
    console.log(`${v.padEnd(5)} ${p.stmts.length} statements for ${records} records: ${run.describe(v)}`);
  await createProbeKeyspace(c);
  const names = Object.keys(plans);
  await create(names[0]);
  const warm = planBatches(plans[names[0]].stmts.slice(0, 200_000));
  await runPool(warm.length, CONCURRENCY, (b) => c.batch(warm[b], { ...OPTS, logged: false }));
  const cpu: Record<string, number[]> = {};
  const rates: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < names.length; j++) {
      const v = names[(j + round) % names.length];
      await create(v);
      const bs = planBatches(plans[v].stmts);
      const reads = plans[v].reads;
      const readEvery = reads ? Math.max(1, Math.floor(bs.length / reads)) : 0;
      const readsPer = reads ? Math.max(1, Math.round(reads / bs.length)) : 0;
      const r = await timed(bs.length, async (b) => {
        if (readEvery && b % readEvery === 0) for (let n = 0; n < readsPer; n++) await read(v, bs[b]);
        await c.batch(bs[b], { ...OPTS, logged: false });
      });
      const perRecord = (r.cpuMicros * bs.length) / records;
      (cpu[v] ??= []).push(perRecord);
      (rates[v] ??= []).push((r.rate * records) / bs.length);
      console.log(
        `round ${round} ${v.padEnd(5)} ${Math.round((r.rate * records) / bs.length)} records/s, Cassandra ${perRecord.toFixed(1)} µs/record`,
      );
    }
  }
  for (const v of names)
    console.log(
      `${v.padEnd(5)} median ${Math.round(median(rates[v]))} records/s, Cassandra ${median(cpu[v]).toFixed(1)} µs/record (${cpu[v].map((x) => x.toFixed(1)).join(', ')})`,
    );
}

/** The write probes' common flags and the bench's data set (10k keys, 5% out of order, 6 partitions) they replay. */
export function probeRun(args: string[]): { records: number; rounds: number; lookups: number; d: Dataset } {
  const records = flag(args, '--records', 1_000_000);
  const d = generateDataset({ records, keys: 10_000, outOfOrder: 0.05, partitions: 6, baseTs: 1_700_000_000_000 });
  return { records, rounds: flag(args, '--rounds', 3), lookups: flag(args, '--lookups', 30_000), d };
}

/** Runs a probe's `main`: a failure is printed and sets the exit code. */
export function runMain(main: () => Promise<void>): void {
  void main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}

/** Creates the probes' scratch keyspace `probe` (SimpleStrategy, RF 1) when missing. */
export async function createProbeKeyspace(c: Client): Promise<void> {
  await c.execute(`CREATE KEYSPACE IF NOT EXISTS probe WITH replication = {'class':'SimpleStrategy','replication_factor':1}`);
}

/** Runs the probe command named by the first CLI argument on a bench Cassandra client; an unknown one prints `usage`. */
export function runProbe(commands: Record<string, (c: Client, args: string[]) => Promise<void>>, usage: string): void {
  const [cmd, ...args] = process.argv.slice(2);
  const run = async () => {
    const command = Object.hasOwn(commands, cmd ?? '') ? commands[cmd] : undefined;
    if (!command) throw new Error(`usage: ${usage}`);
    const c = await benchCassandra();
    try {
      await command(c, args);
    } finally {
      await c.shutdown();
    }
  };
  void run().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
