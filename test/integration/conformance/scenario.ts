/**
 * The changelog both Kafka Streams and adjunct materialise, in two phases (before and after a worker restart), and the
 * probes asked of both. Partitions 0–2 carry hand-written keys whose answers are computed by hand in the test;
 * partitions 3–5 carry seeded random keys. Every partition ends at a different stream time.
 */
import { Probe } from './kstreams-reference';

/** History retention (= grace period) of both stores, in ms of event time. */
export const RETENTION_MS = 10_000;
/** Segment interval Kafka Streams picks by default for this retention (max(retention / 3, 2 s)); see the artefacts in compare.ts. */
export const SEGMENT_INTERVAL_MS = Math.max(Math.floor(RETENTION_MS / 3), 2_000);
/** Event time 0 of the scenario (all timestamps are BASE + offset). */
export const BASE = 1_000_000_000_000;
/** A probe time before everything and one after everything. */
export const FAR_PAST = 0;
export const FAR_FUTURE = BASE + 1_000_000_000;
export const PARTITIONS = 6;

/** One changelog record: a tombstone when value is null. */
export interface ChangeRecord {
  partition: number;
  key: string;
  value: string | null;
  timestamp: number;
}

const at = (partition: number, key: string, value: string | null, offset: number): ChangeRecord => ({
  partition,
  key,
  value,
  timestamp: BASE + offset,
});

/** Hand-written records of phase 1 (comments: stream time st and horizon h = st − retention of the partition after the record). */
function handPhaseOne(): ChangeRecord[] {
  return [
    // partition 0: the fast one
    at(0, 'a', 'a1', 0),
    at(0, 'a', 'a2', 5_000),
    at(0, 'Zürich', 'z1', 1_000),
    at(0, 'a', 'a3', 20_000), // st 20000, h 10000
    at(0, 'a', 'late-ok', 12_000), // out of order within retention: validTo 20000, cuts a2 to 12000
    at(0, 'a', 'too-late', 9_999), // older than retention: not put
    at(0, 'a', 'boundary', 10_000), // exactly at the horizon: put, validTo 12000
    at(0, 'a', null, 25_000), // tombstone; st 25000
    at(0, 'a', '', 30_000), // empty string is a value, not a tombstone; st 30000
    at(0, 'a', 'dup1', 32_000),
    at(0, 'a', 'dup2', 32_000), // same key and timestamp: replaces dup1
    at(0, 'Zürich', 'z2', 31_000),
    at(0, 'Zürich', null, 33_000),
    at(0, 'a', 'last', 40_000), // st 40000, h 30000
    // partition 1: medium
    at(1, 'b', 'b1', 0),
    at(1, 'b', 'b2', 3_000),
    at(1, '東京', 't1', 2_000),
    at(1, 'b', 'b3', 15_000), // st 15000, h 5000
    at(1, 'b', 'b-late', 4_000), // older than retention: not put
    at(1, '東京', 't2', 5_000), // exactly at the horizon: put
    at(1, 'b', null, 16_000),
    at(1, 'b', 'b4', 16_000), // replaces the tombstone of the same timestamp
    at(1, '東京', '', 17_000), // st 17000, h 7000
    // partition 2: slow, nothing expires
    at(2, 'c', 'c1', 0),
    at(2, 'c', 'c2', 2_000),
    at(2, 'c', 'c1b', 1_000), // out of order
    at(2, '🙂 emoji', 'e1', 1_500),
    at(2, '🙂 emoji', null, 2_500),
    at(2, 'c', 'c4', 4_000),
    at(2, 'c', '', 4_000), // replaces c4 with the empty string; st 4000, h -6000
  ];
}

/** Hand-written records of phase 2 (produced while the worker is down, read after its restart). */
function handPhaseTwo(): ChangeRecord[] {
  return [
    at(0, 'a', 'p2-too-late', 29_999), // older than the persisted stream time allows (h 30000): not put
    at(0, 'Zürich', 'z3', 36_000),
    at(0, 'a', 'p2', 45_000), // st 45000, h 35000
    at(1, 'b', 'b5', 18_000), // st 18000, h 8000
    at(1, '東京', 't3', 8_000), // exactly at the horizon: put, validTo 17000
    at(2, 'c', 'c5', 6_000), // st 6000, h -4000
    at(2, '🙂 emoji', 'e3', 500), // deep out of order but within retention: put, validTo 1500
  ];
}

/** mulberry32: a small seeded PRNG so the random part of the scenario is the same on every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Random records for partitions 3–5, each advancing at its own pace (so stream times differ): a quarter arrive out of
 * order by up to 1.6 × retention (some beyond it), some repeat a key's last timestamp, some are tombstones or empty strings.
 */
function randomPhases(perPhase: number): [ChangeRecord[], ChangeRecord[]] {
  const rnd = prng(889_968);
  const pace = new Map([
    [3, 900],
    [4, 300],
    [5, 60],
  ]);
  const phases: [ChangeRecord[], ChangeRecord[]] = [[], []];
  for (const [partition, step] of pace) {
    const keys = [0, 1, 2, 3, 4].map((i) => (i % 2 === 0 ? `k${partition}.${i}` : `ключ-${partition}.${i}-ß`));
    const lastTs = new Map<string, number>();
    let cursor = 0;
    for (const phase of phases) {
      for (let i = 0; i < perPhase; i++) {
        const key = keys[Math.floor(rnd() * keys.length)];
        const r = rnd();
        let ts: number;
        if (r < 0.1 && lastTs.has(key)) ts = lastTs.get(key)!;
        else if (r < 0.35) ts = Math.max(0, cursor - Math.floor(rnd() * 1.6 * RETENTION_MS));
        else ts = cursor += 1 + Math.floor(rnd() * step);
        lastTs.set(key, ts);
        const v = rnd();
        const value = v < 0.12 ? null : v < 0.2 ? '' : `${key}@${ts}#${phase.length}${v < 0.3 ? ' — ünïcödé' : ''}`;
        phase.push(at(partition, key, value, ts));
      }
    }
  }
  return phases;
}

/** The records of both phases. */
export function scenario(): { phaseOne: ChangeRecord[]; phaseTwo: ChangeRecord[] } {
  const [r1, r2] = randomPhases(40);
  return { phaseOne: [...handPhaseOne(), ...r1], phaseTwo: [...handPhaseTwo(), ...r2] };
}

/** Stream time of each partition after the given records (the largest timestamp; every put advances it). */
export function streamTimes(records: ChangeRecord[]): Map<number, number> {
  const st = new Map<number, number>();
  for (const r of records) st.set(r.partition, Math.max(st.get(r.partition) ?? Number.NEGATIVE_INFINITY, r.timestamp));
  return st;
}

/** Each partition's retention horizon (stream time − retention) after the given records. */
export function horizons(records: ChangeRecord[]): Map<number, number> {
  return new Map([...streamTimes(records)].map(([p, t]) => [p, t - RETENTION_MS]));
}

/**
 * Probes for every key produced so far: the latest get; as-of gets at every timestamp written for the key and ±1, at
 * every partition's horizon ±1, far past and far future; and histories over ranges between consecutive such points.
 */
export function probes(records: ChangeRecord[]): Probe[] {
  const hs = [...horizons(records).values()];
  const byKey = new Map<string, { partition: number; times: number[] }>();
  for (const r of records) {
    const k = byKey.get(r.key) ?? { partition: r.partition, times: [] };
    if (k.partition !== r.partition) throw new Error(`scenario bug: key ${r.key} in two partitions`);
    k.times.push(r.timestamp);
    byKey.set(r.key, k);
  }
  const out: Probe[] = [];
  for (const [key, { partition, times }] of byKey) {
    const asOfs = uniqueSorted([FAR_PAST, FAR_FUTURE, ...[...times, ...hs].flatMap((t) => [t - 1, t, t + 1])]);
    out.push({ op: 'get', partition, key });
    for (const asOf of asOfs) out.push({ op: 'get', partition, key, asOf });
    const points = uniqueSorted([FAR_PAST, FAR_FUTURE, ...times, ...hs]);
    const ranges: [number, number][] = [[FAR_PAST, FAR_FUTURE]];
    points.forEach((from, i) => {
      for (const to of points.slice(i, i + 3)) ranges.push([from, to]);
      if (i + 1 < points.length && from + 1 <= points[i + 1] - 1) ranges.push([from + 1, points[i + 1] - 1]);
      ranges.push([from, FAR_FUTURE]);
    });
    for (const [fromTime, toTime] of uniqueRanges(ranges)) out.push({ op: 'history', partition, key, fromTime, toTime });
  }
  return out;
}

function uniqueSorted(ts: number[]): number[] {
  return [...new Set(ts.filter((t) => t >= 0))].sort((x, y) => x - y);
}

function uniqueRanges(rs: [number, number][]): [number, number][] {
  const seen = new Set<string>();
  return rs.filter(([f, t]) => f <= t && !seen.has(`${f},${t}`) && seen.add(`${f},${t}`));
}
