/** Bounded-concurrency drivers used by the benchmark phases. */
import { LatencyRecorder } from './stats';

/** Runs fn(i) for i in [0, count) with at most `concurrency` calls in flight; records each call's latency. */
export async function runPool(
  count: number,
  concurrency: number,
  fn: (i: number) => Promise<unknown>,
  latency?: LatencyRecorder,
): Promise<void> {
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

/**
 * Cuts records [0, count) into consecutive batches of at most maxRows rows and maxBytes bytes (a row larger than
 * maxBytes goes alone); returns the boundaries: batch b is [bounds[b], bounds[b + 1]).
 */
export function batchesBySize(count: number, sizeOf: (i: number) => number, maxBytes: number, maxRows: number): number[] {
  const bounds = [0];
  let rows = 0;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const s = sizeOf(i);
    if (rows > 0 && (rows >= maxRows || bytes + s > maxBytes)) {
      bounds.push(i);
      rows = 0;
      bytes = 0;
    }
    rows++;
    bytes += s;
  }
  if (count > 0) bounds.push(count);
  return bounds;
}
