import { parseBenchArgs, DEFAULT_OPTIONS } from '../../../tools/bench/args';
import { fnv1a, generateDataset, mulberry32, outOfOrderShare } from '../../../tools/bench/dataset';
import { batchesBySize, lanesByKey } from '../../../tools/bench/pool';
import { medianPhase } from '../../../tools/bench/report';
import { LatencyRecorder, median, percentile, summarize } from '../../../tools/bench/stats';
import { interleavedRound } from '../../../tools/bench/interleaved';

describe('bench stats', () => {
  it('computes nearest-rank percentiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile(xs, 100)).toBe(100);
    expect(percentile(xs, 0)).toBe(1);
    expect(percentile([7], 99)).toBe(7);
    expect(Number.isNaN(percentile([], 50))).toBe(true);
    expect(() => percentile(xs, 101)).toThrow(RangeError);
  });

  it('summarises unsorted samples and grows the recorder', () => {
    const r = new LatencyRecorder(16);
    for (let i = 1000; i >= 1; i--) r.add(i / 10);
    const s = r.summary();
    expect(s.count).toBe(1000);
    expect(s.p50Ms).toBeCloseTo(50);
    expect(s.p99Ms).toBeCloseTo(99);
    expect(s.maxMs).toBeCloseTo(100);
    expect(s.meanMs).toBeCloseTo(50.05);
    expect(summarize([3, 1, 2]).p50Ms).toBe(2);
  });
});

describe('bench data set', () => {
  const opts = { records: 50_000, keys: 1000, outOfOrder: 0.05, partitions: 6, seed: 7, baseTs: 1_700_000_000_000 };

  it('is deterministic per seed', () => {
    const a = generateDataset(opts);
    const b = generateDataset(opts);
    expect(Buffer.compare(Buffer.from(a.ts.buffer), Buffer.from(b.ts.buffer))).toBe(0);
    expect(a.values[123].equals(b.values[123])).toBe(true);
    expect(mulberry32(1)()).toBe(mulberry32(1)());
  });

  it('has ~200-byte JSON values and keys pinned to one partition', () => {
    const d = generateDataset(opts);
    const sizes = d.values.map((v) => v.length);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(195);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(205);
    expect(JSON.parse(d.values[0].toString()).id).toBe(d.keyStrings[d.keyIdx[0]]);
    for (let k = 0; k < d.keyStrings.length; k++) expect(d.keyPartition[k]).toBe(fnv1a(d.keyStrings[k]) % 6);
    const perPartition = new Array(6).fill(0);
    for (let k = 0; k < d.keyStrings.length; k++) perPartition[d.keyPartition[k]]++;
    for (const n of perPartition) expect(n).toBeGreaterThan(100);
  });

  it('puts the configured share of records behind their partition stream time', () => {
    const d = generateDataset(opts);
    expect(d.outOfOrderGenerated / d.size).toBeGreaterThan(0.045);
    expect(d.outOfOrderGenerated / d.size).toBeLessThan(0.055);
    // Every generated late record is behind its partition's stream time (lag ≥ 50 ms ≫ records per partition per ms).
    const share = outOfOrderShare(d, 6);
    expect(share).toBeGreaterThan(0.045);
    expect(share).toBeLessThan(0.056);
    expect(outOfOrderShare(generateDataset({ ...opts, outOfOrder: 0 }), 6)).toBe(0);
  });

  it('uses keys roughly uniformly', () => {
    const d = generateDataset(opts);
    const counts = new Uint32Array(1000);
    for (const k of d.keyIdx) counts[k]++;
    expect(Math.max(...counts)).toBeLessThan(100);
    expect(Math.min(...counts)).toBeGreaterThan(15);
  });
});

describe('bench lanes and args', () => {
  it('keeps a key in one lane, in record order', () => {
    const keyIdx = Uint32Array.from([3, 1, 3, 2, 1, 3]);
    const lanes = lanesByKey(keyIdx, 2);
    expect([...lanes[1]]).toEqual([0, 1, 2, 4, 5]);
    expect([...lanes[0]]).toEqual([3]);
  });

  it('parses flags with defaults', () => {
    expect(parseBenchArgs([])).toEqual(DEFAULT_OPTIONS);
    const o = parseBenchArgs(['--records', '1_000_000', '--out-of-order=0.1', '--phases', 'adjunct', '--profile']);
    expect(o.records).toBe(1_000_000);
    expect(o.outOfOrder).toBe(0.1);
    expect(o.phases).toEqual(['adjunct']);
    expect(o.profile).toBe(true);
    expect(() => parseBenchArgs(['--records', 'x'])).toThrow(/not a number/);
    expect(() => parseBenchArgs(['--nope'])).toThrow(/unknown flag/);
    expect(() => parseBenchArgs(['--phases', 'lookups'])).toThrow(/include adjunct/);
    expect(() => parseBenchArgs(['--out-of-order', '1'])).toThrow();
    const r = parseBenchArgs(['--rounds', '5', '--pin', '--batch-max-bytes', '2048', '--batch-max-rows=16']);
    expect([r.rounds, r.pin, r.batchMaxBytes, r.batchMaxRows]).toEqual([5, true, 2048, 16]);
    expect(() => parseBenchArgs(['--rounds', '0'])).toThrow(/rounds/);
    expect(parseBenchArgs([]).warmupRounds).toBe(1);
    expect(parseBenchArgs(['--warmup-rounds', '0']).warmupRounds).toBe(0);
    expect(() => parseBenchArgs(['--warmup-rounds', '-1'])).toThrow(/warmupRounds/);
  });
});

describe('bench batches and medians', () => {
  it('cuts batches at the row bound and before a row that would pass the byte bound; a big row goes alone', () => {
    const sizes = [100, 100, 100, 100, 100, 900, 100, 2000, 100];
    expect(batchesBySize(sizes.length, (i) => sizes[i], 1000, 4)).toEqual([0, 4, 6, 7, 8, 9]);
    expect(batchesBySize(0, () => 1, 10, 1)).toEqual([0]);
  });

  it('reports the round with the median rate and every round rate', () => {
    const p = (rate: number) => ({ phase: 'x', count: 1, unit: 'records' as const, seconds: 1 / rate, ratePerSec: rate });
    const m = medianPhase([p(30), p(10), p(20)]);
    expect(m.ratePerSec).toBe(20);
    expect(m.extra).toEqual({ rounds: 3, roundRates: [30, 10, 20] });
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(Number.isNaN(median([]))).toBe(true);
  });
});

describe('bench lookups interleaved', () => {
  it('runs every lookup of every kind once per round, each kind in every slot position equally often', async () => {
    const names = ['a', 'b', 'c', 'd'];
    const calls = new Map(names.map((n) => [n, [] as number[]]));
    const order: string[] = [];
    const kinds = names.map((name) => ({
      name,
      fn: async (i: number) => {
        if (order[order.length - 1] !== name) order.push(name);
        calls.get(name)!.push(i);
      },
    }));
    const tallies = await interleavedRound(kinds, 101, 4, 1);
    for (const n of names) {
      expect([...calls.get(n)!].sort((x, y) => x - y)).toEqual(Array.from({ length: 101 }, (_, i) => i));
      expect(tallies.get(n)!.lat.count).toBe(101);
      expect(tallies.get(n)!.server).toBeUndefined();
    }
    expect(order).toHaveLength(8 * names.length);
    // Slot j of slice s: how often each kind ran there.
    for (let j = 0; j < names.length; j++) {
      const at = Array.from({ length: 8 }, (_, s) => order[s * names.length + j]);
      for (const n of names) expect(at.filter((x) => x === n)).toHaveLength(2);
    }
  });
});
