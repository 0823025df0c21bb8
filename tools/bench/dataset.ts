/** Deterministic benchmark data: N records over K keys, ~200-byte JSON values, mostly increasing timestamps. */

/** Settings of the generated data set. */
export interface DatasetOptions {
  records: number;
  keys: number;
  /** Share (0..1) of records whose timestamp lies behind the stream time of their partition. */
  outOfOrder: number;
  partitions: number;
  /** PRNG seed (default 42). */
  seed?: number;
  /** Timestamp of record 0 (default: now − records ms − 2 min, so no timestamp is in the future; late records may precede it). */
  baseTs?: number;
  /** Target size of a JSON value in bytes (default 200). */
  valueBytes?: number;
}

/** The generated records, column-wise (cheap to hold 1M of them). */
export interface Dataset {
  readonly size: number;
  /** Distinct keys as strings (`k000042`) and their UTF-8 bytes. */
  readonly keyStrings: string[];
  readonly keyBytes: Buffer[];
  /** Source partition of each key. */
  readonly keyPartition: Uint16Array;
  /** Per record: key index, timestamp (ms), JSON value bytes. */
  readonly keyIdx: Uint32Array;
  readonly ts: Float64Array;
  readonly values: Buffer[];
  readonly minTs: number;
  readonly maxTs: number;
  /** Records generated behind the timeline (the configured share). */
  readonly outOfOrderGenerated: number;
}

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a 32-bit hash of a string (stable key → partition mapping). */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Smallest lag (ms) of an out-of-order record: far enough back to be behind its partition's stream time. */
export const MIN_LAG_MS = 50;
/** Largest lag (ms) of an out-of-order record (well inside the default 1-day history retention). */
export const MAX_LAG_MS = 60_000;

/** Generates the data set deterministically from its options. */
export function generateDataset(o: DatasetOptions): Dataset {
  if (!(o.records > 0 && o.keys > 0 && o.partitions > 0)) throw new RangeError('records, keys and partitions must be positive');
  if (!(o.outOfOrder >= 0 && o.outOfOrder < 1)) throw new RangeError('outOfOrder must be in [0, 1)');
  const rnd = mulberry32(o.seed ?? 42);
  const valueBytes = o.valueBytes ?? 200;
  const base = o.baseTs ?? Date.now() - o.records - 120_000;
  const keyStrings: string[] = [];
  const keyBytes: Buffer[] = [];
  const keyPartition = new Uint16Array(o.keys);
  for (let k = 0; k < o.keys; k++) {
    const s = `k${k.toString().padStart(6, '0')}`;
    keyStrings.push(s);
    keyBytes.push(Buffer.from(s, 'utf8'));
    keyPartition[k] = fnv1a(s) % o.partitions;
  }
  const keyIdx = new Uint32Array(o.records);
  const ts = new Float64Array(o.records);
  const values: Buffer[] = new Array(o.records);
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  let ooo = 0;
  const pad = 'x'.repeat(valueBytes);
  for (let i = 0; i < o.records; i++) {
    const k = Math.floor(rnd() * o.keys);
    let t = base + i;
    if (rnd() < o.outOfOrder) {
      t -= MIN_LAG_MS + Math.floor(rnd() * (MAX_LAG_MS - MIN_LAG_MS));
      ooo++;
    }
    keyIdx[i] = k;
    ts[i] = t;
    minTs = Math.min(minTs, t);
    maxTs = Math.max(maxTs, t);
    const body = `{"id":"${keyStrings[k]}","seq":${i},"ts":${t},"price":${(rnd() * 1000).toFixed(4)},"currency":"EUR","note":"`;
    const fill = Math.max(0, valueBytes - body.length - 2);
    values[i] = Buffer.from(`${body}${pad.slice(0, fill)}"}`, 'utf8');
  }
  return { size: o.records, keyStrings, keyBytes, keyPartition, keyIdx, ts, values, minTs, maxTs, outOfOrderGenerated: ooo };
}

/** Share of records whose timestamp is below the max timestamp seen before them in the same partition. */
export function outOfOrderShare(d: Dataset, partitions: number): number {
  const streamTime = new Float64Array(partitions).fill(Number.NEGATIVE_INFINITY);
  let behind = 0;
  for (let i = 0; i < d.size; i++) {
    const p = d.keyPartition[d.keyIdx[i]];
    if (d.ts[i] < streamTime[p]) behind++;
    else streamTime[p] = d.ts[i];
  }
  return d.size ? behind / d.size : 0;
}
