/** Bounded-concurrency drivers used by the benchmark phases. */
import { LatencyRecorder } from './stats';

/** Runs fn(i) for i in [0, count) with at most `concurrency` calls in flight; records each call's latency. */
export async function runPool(count: number, concurrency: number, fn: (i: number) => Promise<unknown>, latency?: LatencyRecorder): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const t0 = performance.now();
      await fn(i);
      latency?.add(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** Splits record indexes into `lanes` lists by key (records of one key stay in one lane, in order). */
export function lanesByKey(keyIdx: ArrayLike<number>, lanes: number): Uint32Array[] {
  const sizes = new Uint32Array(lanes);
  for (let i = 0; i < keyIdx.length; i++) sizes[keyIdx[i] % lanes]++;
  const out = Array.from(sizes, (n) => new Uint32Array(n));
  const fill = new Uint32Array(lanes);
  for (let i = 0; i < keyIdx.length; i++) {
    const l = keyIdx[i] % lanes;
    out[l][fill[l]++] = i;
  }
  return out;
}

/** Runs each lane's records sequentially and the lanes concurrently (per-key serialisation with `lanes` in flight). */
export async function runLanes(lanes: Uint32Array[], fn: (i: number) => Promise<unknown>, latency?: LatencyRecorder): Promise<void> {
  await Promise.all(
    lanes.map(async (idx) => {
      for (let j = 0; j < idx.length; j++) {
        const t0 = performance.now();
        await fn(idx[j]);
        latency?.add(performance.now() - t0);
      }
    }),
  );
}
