/** Byte bounds of a key scan: inclusive lower, inclusive or exclusive upper, each optional. */
export interface ByteRange {
  from?: Buffer;
  to?: Buffer;
  /** When true, `to` is exclusive (used by prefix scans). */
  toExclusive?: boolean;
}

/** The inclusive byte range [from, to] of two optional keys (null/undefined = unbounded), encoded with encode. */
export function keyBounds<K>(from: K | null | undefined, to: K | null | undefined, encode: (key: K) => Buffer): ByteRange {
  return {
    from: from === undefined || from === null ? undefined : encode(from),
    to: to === undefined || to === null ? undefined : encode(to),
  };
}

/** The smallest byte string greater than every string starting with prefix, or undefined if none (all 0xFF). */
export function prefixUpperBound(prefix: Buffer): Buffer | undefined {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return undefined;
  const out = Buffer.from(prefix.subarray(0, end));
  out[end - 1]++;
  return out;
}

/** The byte range covering every key that starts with prefix. */
export function prefixRange(prefix: Buffer): ByteRange {
  const upper = prefixUpperBound(prefix);
  return prefix.length === 0 ? {} : { from: prefix, to: upper, toExclusive: upper !== undefined };
}

/** True if the range cannot contain any key (from > to, or from >= exclusive to). */
export function isEmptyRange(r: ByteRange): boolean {
  if (r.from === undefined || r.to === undefined) return false;
  const c = Buffer.compare(r.from, r.to);
  return r.toExclusive ? c >= 0 : c > 0;
}

/** True if key lies inside the range. */
export function inRange(key: Buffer, r: ByteRange): boolean {
  if (r.from !== undefined && Buffer.compare(key, r.from) < 0) return false;
  if (r.to !== undefined) {
    const c = Buffer.compare(key, r.to);
    if (r.toExclusive ? c >= 0 : c > 0) return false;
  }
  return true;
}
