/** Shared pieces of the issue #13 probes: flags, a deterministic PRNG, timed pools and rotated lookup rounds. */
import { Client, types } from 'cassandra-driver';
import { benchCassandra } from '../infra';
import { stackSettings } from '../../devstack/endpoints';
import { runPool } from '../pool';
import { cassandraCpuSeconds, settleCassandra } from '../server-cpu';
import { median } from '../stats';

/** Statement options every probe request uses. */
export const OPTS = { prepare: true, isIdempotent: true, consistency: types.consistencies.localQuorum };
/** Requests in flight in every probe pool. */
export const CONCURRENCY = 64;

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
 * Lookup kinds warmed up, then timed in `rounds` (3) rounds of rotated order; prints each round (with `extra()`'s note, read
 * after the round) and each kind's median rate against `baseline`'s.
 */
export async function compareLookups(
  kinds: Record<string, (i: number) => Promise<unknown>>,
  lookups: number,
  baseline: string,
  extra: (name: string) => string = () => '',
  beforeRound: () => void = () => undefined,
  rounds = 3,
): Promise<void> {
  const names = Object.keys(kinds);
  for (const n of names) await runPool(Math.min(2000, lookups), CONCURRENCY, kinds[n]);
  const rates: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (let j = 0; j < names.length; j++) {
      const n = names[(j + round) % names.length];
      beforeRound();
      const r = await timed(lookups, kinds[n]);
      (rates[n] ??= []).push(r.rate);
      console.log(`round ${round} ${n.padEnd(14)} ${Math.round(r.rate)}/s, Cassandra ${r.cpuMicros.toFixed(1)} µs/lookup${extra(n)}`);
    }
  }
  for (const n of names) {
    const ratio = (median(rates[n]) / median(rates[baseline])).toFixed(2);
    console.log(`${n.padEnd(14)} median ${Math.round(median(rates[n]))}/s, ${ratio} of ${baseline}`);
  }
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
