/** Latency statistics for the benchmark: percentiles over recorded samples (pure, no I/O). */

/** Percentile (0..100) of an ascending-sorted array, nearest-rank; NaN when empty. */
export function percentile(sortedAsc: ArrayLike<number>, p: number): number {
  const n = sortedAsc.length;
  if (n === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in 0..100, got ${p}`);
  const rank = Math.ceil((p / 100) * n);
  return sortedAsc[Math.min(n - 1, Math.max(0, rank - 1))];
}

/** Summary of a latency distribution, in milliseconds. */
export interface LatencySummary {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Fixed-capacity recorder of latency samples (ms) backed by a Float64Array. */
export class LatencyRecorder {
  private samples: Float64Array;
  private n = 0;

  constructor(capacity = 1024) {
    this.samples = new Float64Array(Math.max(16, capacity));
  }

  /** Adds one sample in ms. */
  add(ms: number): void {
    if (this.n === this.samples.length) {
      const bigger = new Float64Array(this.samples.length * 2);
      bigger.set(this.samples);
      this.samples = bigger;
    }
    this.samples[this.n++] = ms;
  }

  /** Number of samples recorded. */
  get count(): number {
    return this.n;
  }

  /** p50/p99/max/mean of the samples (NaN fields when empty). */
  summary(): LatencySummary {
    return summarize(this.samples.subarray(0, this.n));
  }
}

/** Summarises samples (ms) without modifying the input. */
export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  const n = sorted.length;
  return {
    count: n,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: n ? sorted[n - 1] : Number.NaN,
    meanMs: n ? sum / n : Number.NaN,
  };
}

/** Milliseconds elapsed since a process.hrtime.bigint() mark. */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Rate per second of count over ms (0 when ms is 0). */
export function ratePerSec(count: number, ms: number): number {
  return ms > 0 ? (count * 1000) / ms : 0;
}

/** CPU time (user + system, µs) this process used since start. */
export function cpuMicrosSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return d.user + d.system;
}

/** Median of numbers (mean of the middle two for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
