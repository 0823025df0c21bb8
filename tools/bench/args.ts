/** Command-line flags of `npm run bench` (pure parsing, no I/O). */

import { CASSANDRA_BATCH_WARN_BYTES } from '../../src/store/cassandra/batch-data-size';

/** Every benchmark phase, in run order. */
export const ALL_PHASES = ['raw-insert', 'raw-batched-insert', 'raw-consume', 'adjunct', 'seed-path', 'lookups'] as const;
/** Phases repeated in every round, in alternating order (medians are reported). */
export const ROUND_PHASES: readonly Phase[] = ['raw-insert', 'raw-batched-insert', 'adjunct', 'seed-path'];
/** One benchmark phase. */
export type Phase = (typeof ALL_PHASES)[number];

/** Parsed benchmark options. */
export interface BenchOptions {
  records: number;
  keys: number;
  outOfOrder: number;
  lookups: number;
  concurrency: number;
  partitions: number;
  /** Concurrency of the lookup phase (64). */
  lookupConcurrency: number;
  /** Worker commit interval in ms (100: small against the run, so the last commit follows the last write closely). */
  commitInterval: number;
  /** Rounds of the timed write phases, in rotated order (medians reported). */
  rounds: number;
  /** Untimed rounds of the same phases first (1): a freshly started Cassandra is still compiling its hot paths in round 1. */
  warmupRounds: number;
  /** Batch bounds of the worker and of the raw batched baseline (the worker's defaults). */
  batchMaxBytes: number;
  batchMaxRows: number;
  /** The store's compaction class (the worker default when unset), e.g. UnifiedCompactionStrategy. */
  compaction?: string;
  /** The versioned table layout the adjunct phase writes and the library reads (default `rows`, the worker's); the bare SELECTs always read a `rows` table. */
  layout: 'rows' | 'edges';
  /** Pin Cassandra and Kafka to CPU 0 and the client under test to CPU 1 (taskset), restoring affinity afterwards. */
  pin: boolean;
  phases: Phase[];
  /** Run the adjunct child under `node --cpu-prof` and summarise the profile. */
  profile: boolean;
  /** Keep the topic and keyspaces afterwards. */
  keep: boolean;
  /** Write bench/results/latest.json and append to history.jsonl. */
  record: boolean;
  seed: number;
}

/** Defaults of every flag. */
export const DEFAULT_OPTIONS: BenchOptions = {
  records: 200_000,
  keys: 10_000,
  outOfOrder: 0.05,
  lookups: 100_000,
  concurrency: 64,
  partitions: 6,
  lookupConcurrency: 64,
  commitInterval: 100,
  rounds: 3,
  warmupRounds: 1,
  batchMaxBytes: CASSANDRA_BATCH_WARN_BYTES,
  batchMaxRows: 64,
  pin: false,
  layout: 'rows',
  phases: [...ALL_PHASES],
  profile: false,
  keep: false,
  record: true,
  seed: 42,
};

const NUMERIC: Record<string, keyof BenchOptions> = {
  '--records': 'records',
  '--keys': 'keys',
  '--out-of-order': 'outOfOrder',
  '--lookups': 'lookups',
  '--concurrency': 'concurrency',
  '--partitions': 'partitions',
  '--lookup-concurrency': 'lookupConcurrency',
  '--commit-interval': 'commitInterval',
  '--rounds': 'rounds',
  '--warmup-rounds': 'warmupRounds',
  '--batch-max-bytes': 'batchMaxBytes',
  '--batch-max-rows': 'batchMaxRows',
  '--seed': 'seed',
};

/** Usage text. */
export const USAGE = `npm run bench -- [--records N=200000] [--keys K=10000] [--out-of-order 0.05] [--lookups M=100000]
  [--concurrency C=64] [--partitions 6] [--lookup-concurrency 64] [--commit-interval 100] [--seed 42]
  [--rounds 3] [--warmup-rounds 1] [--batch-max-bytes 5120] [--batch-max-rows 64] [--pin] [--compaction CLASS] [--layout edges|rows]
  [--phases raw-insert,raw-batched-insert,raw-consume,adjunct,seed-path,lookups] [--profile] [--keep] [--no-record]`;

function parseNumber(flag: string, raw: string | undefined): number {
  if (raw === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isFinite(n)) throw new Error(`${flag}: not a number: ${raw}`);
  return n;
}

/** Parses argv (without node and script); throws with usage on bad input. */
export function parseBenchArgs(argv: string[]): BenchOptions {
  const o: BenchOptions = { ...DEFAULT_OPTIONS, phases: [...DEFAULT_OPTIONS.phases] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes('=') ? (argv[i].split(/=(.*)/s, 2) as [string, string]) : [argv[i], undefined];
    const field = NUMERIC[flag];
    if (field) {
      (o as unknown as Record<string, number>)[field] = parseNumber(flag, inline ?? argv[++i]);
    } else if (flag === '--phases') {
      const list = (inline ?? argv[++i] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const bad = list.filter((p) => !(ALL_PHASES as readonly string[]).includes(p));
      if (bad.length || !list.length)
        throw new Error(`--phases: unknown phase(s) ${bad.join(',') || '(none)'}; known: ${ALL_PHASES.join(',')}`);
      o.phases = ALL_PHASES.filter((p) => list.includes(p));
    } else if (flag === '--profile') o.profile = true;
    else if (flag === '--pin') o.pin = true;
    else if (flag === '--compaction') {
      const v = inline ?? argv[++i] ?? '';
      if (!/^[A-Za-z][A-Za-z0-9_.]*$/.test(v)) throw new Error(`--compaction: not a class name: ${v}`);
      o.compaction = v;
    } else if (flag === '--layout') {
      const v = inline ?? argv[++i] ?? '';
      if (v !== 'rows' && v !== 'edges') throw new Error(`--layout: rows or edges, got ${v}`);
      o.layout = v;
    } else if (flag === '--keep') o.keep = true;
    else if (flag === '--no-record') o.record = false;
    else if (flag === '--help' || flag === '-h') throw new Error(USAGE);
    else throw new Error(`unknown flag ${flag}\n${USAGE}`);
  }
  for (const k of [
    'records',
    'keys',
    'lookups',
    'concurrency',
    'partitions',
    'lookupConcurrency',
    'commitInterval',
    'rounds',
    'warmupRounds',
    'batchMaxBytes',
    'batchMaxRows',
  ] as const) {
    const min = k === 'lookups' || k === 'warmupRounds' ? 0 : 1;
    if (!Number.isSafeInteger(o[k]) || o[k] < min) throw new Error(`--${k} must be a whole number ≥ ${min}, got ${o[k]}`);
  }
  if (!(o.outOfOrder >= 0 && o.outOfOrder < 1)) throw new Error(`--out-of-order must be in [0, 1), got ${o.outOfOrder}`);
  if (o.phases.includes('lookups') && !o.phases.includes('adjunct'))
    throw new Error('the lookups phase reads the table the adjunct phase writes: include adjunct');
  return o;
}
