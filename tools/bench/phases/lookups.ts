/** As-of lookups on the table the adjunct phase wrote: through the lookup library, and through a bare prepared SELECT. */
import { Client, types } from 'cassandra-driver';
import * as path from 'path';
import * as sourceLookup from '../../../src/lookup';
import { bundleForNode } from '../child-process';
import { Dataset, mulberry32 } from '../dataset';
import { runPool } from '../pool';
import { medianPhase } from '../report';
import { settleCassandra } from '../server-cpu';
import { interleavedRound } from '../interleaved';
import { flushForReads } from '../table-state';
import { stackSettings } from '../../devstack/endpoints';
import { ratePerSec } from '../stats';
import { PhaseResult } from './types';

/**
 * The lookup library as its users run it: compiled, from a bundle (bench/.build/lookup.js) rather than through the
 * bench's tsx loader, whose keepNames wrappers cost every closure a get creates a `__name` call. The sources through
 * tsx only when esbuild is missing, or when `BENCH_LOOKUP_LIBRARY=tsx` asks for them (the A/B of the two loaders in the
 * README's history); `build` says which.
 */
export async function compiledLookupLibrary(): Promise<{ lib: typeof sourceLookup; build: 'bundle' | 'tsx' }> {
  if (process.env.BENCH_LOOKUP_LIBRARY === 'tsx') return { lib: sourceLookup, build: 'tsx' };
  const file = await bundleForNode(path.join('src', 'lookup', 'index.ts'), 'lookup');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return file === null ? { lib: sourceLookup, build: 'tsx' } : { lib: require(file) as typeof sourceLookup, build: 'bundle' };
}

const warm0 = (count: number): number => Math.min(count, 2000);

/** Random (key, asOf) pairs over the data set's keys and time range, deterministic per seed. */
export function lookupQueries(d: Dataset, count: number, seed: number): { keys: Uint32Array; asOf: Float64Array } {
  const rnd = mulberry32(seed ^ 0x5eed);
  const keys = new Uint32Array(count);
  const asOf = new Float64Array(count);
  const span = d.maxTs - d.minTs;
  for (let i = 0; i < count; i++) {
    keys[i] = Math.floor(rnd() * d.keyStrings.length);
    asOf[i] = d.minTs + Math.floor(rnd() * (span + 1));
  }
  return { keys, asOf };
}

/** Where the lookup phases run: the table's keyspace and store, and the stack whose Cassandra CPU is sampled. */
export interface LookupTarget {
  /** The keyspace the library reads (the layout under test). */
  keyspace: string;
  /** The keyspace the bare SELECTs read: the same data in the rows layout. */
  rawKeyspace: string;
  storeName: string;
  stackDir: string;
}

/**
 * Runs M as-of lookups through openLookup(...).store(name).get(key, asOf), through a bare SELECT, and through the bare
 * pair of SELECTs the library issues for validTo (version as of, and the next one's valid_from, in parallel). On an idle
 * Cassandra (the fill's flushes and compactions done), `warmupRounds` untimed rounds, then `rounds` timed ones, each
 * with the kinds interleaved (interleavedRound) and its Cassandra and client CPU per lookup; returns each kind's median
 * round.
 */
export async function lookupPhases(
  client: Client,
  target: LookupTarget,
  d: Dataset,
  count: number,
  concurrency: number,
  seed: number,
  rounds: number,
  warmupRounds = 1,
): Promise<{
  library: PhaseResult;
  libraryValue: PhaseResult;
  raw: PhaseResult;
  rawPair: PhaseResult;
  found: { library: number; libraryValue: number; raw: number };
}> {
  const { keyspace, rawKeyspace, storeName, stackDir } = target;
  const q = lookupQueries(d, count, seed);
  const { lib, build } = await compiledLookupLibrary();
  const { openLookup } = lib;
  const lookup = await openLookup({ client, keyspace });
  const store = lookup.store<string, unknown>(storeName);
  const rawLookup = await openLookup({ client, keyspace: rawKeyspace });
  const table = (await rawLookup.store(storeName).info()).table;
  await rawLookup.close();
  // Both tables flushed alike: a table just filled would otherwise answer partly from its memtable.
  const sstables = await flushForReads(client, stackSettings(), [
    { keyspace, table: (await store.info()).table },
    { keyspace: rawKeyspace, table },
  ]);
  const cql = `SELECT valid_from, value FROM ${rawKeyspace}.${table} WHERE key = ? AND valid_from <= ? LIMIT 1`;
  const nextCql = `SELECT valid_from FROM ${rawKeyspace}.${table} WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1`;
  const opts = { prepare: true, consistency: types.consistencies.localQuorum, isIdempotent: true };
  const found = { library: 0, libraryValue: 0, raw: 0 };
  const viaLibrary = async (i: number) => {
    if ((await store.get(d.keyStrings[q.keys[i]], q.asOf[i])) !== null) found.library++;
  };
  const viaLibraryValue = async (i: number) => {
    if ((await store.getValue(d.keyStrings[q.keys[i]], q.asOf[i])) !== null) found.libraryValue++;
  };
  const viaRaw = async (i: number) => {
    if ((await client.execute(cql, [d.keyBytes[q.keys[i]], types.Long.fromNumber(q.asOf[i])], opts)).first()) found.raw++;
  };
  const viaRawPair = async (i: number) => {
    const params = [d.keyBytes[q.keys[i]], types.Long.fromNumber(q.asOf[i])];
    await Promise.all([client.execute(cql, params, opts), client.execute(nextCql, params, opts)]);
  };
  /** Each kind of lookup with the `found` counter its timed runs restart (the bare pair counts nothing). */
  const kinds = [
    { name: 'lookups: bare SELECT', fn: viaRaw, counter: 'raw' },
    { name: 'lookups: bare SELECT pair', fn: viaRawPair, counter: undefined },
    { name: 'lookups: library', fn: viaLibrary, counter: 'library' },
    { name: 'lookups: library getValue', fn: viaLibraryValue, counter: 'libraryValue' },
  ] as const;
  // Prepares, catalog and stream-time caches, untimed.
  for (const k of kinds) await runPool(warm0(count), concurrency, k.fn);
  // Cassandra's read path keeps warming for hundreds of thousands of reads (its JIT and caches: the rates of one kind
  // rose 1.4–2× across the timed rounds): untimed rounds of every kind first, then each round's kinds interleaved in
  // slices, so a drift that is left falls on every kind alike instead of on whichever ran later.
  await settleCassandra(stackDir);
  for (let round = 0; round < warmupRounds; round++) await interleavedRound(kinds, count, concurrency, round);
  const byKind = new Map<string, PhaseResult[]>();
  for (let round = 0; round < rounds; round++) {
    for (const { counter } of kinds) if (counter !== undefined) found[counter] = 0;
    const tallies = await interleavedRound(kinds, count, concurrency, round, stackDir);
    for (const { name } of kinds) {
      const t = tallies.get(name)!;
      const extra = {
        ...t.server!.fields(count),
        cpuMicrosPerRecord: t.cpuMicros / count,
        sstables,
        libraryBuild: build,
        slices: t.slices,
      };
      const result: PhaseResult = {
        phase: name,
        count,
        unit: 'lookups',
        seconds: t.ms / 1000,
        ratePerSec: ratePerSec(count, t.ms),
        latency: t.lat.summary(),
        extra,
      };
      byKind.set(name, [...(byKind.get(name) ?? []), result]);
    }
  }
  await lookup.close();
  const med = (name: string) => medianPhase(byKind.get(name)!);
  return {
    library: med('lookups: library'),
    libraryValue: med('lookups: library getValue'),
    raw: med('lookups: bare SELECT'),
    rawPair: med('lookups: bare SELECT pair'),
    found,
  };
}
