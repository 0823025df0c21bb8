/**
 * The edge layout of a versioned table (round 25, not wired in yet): each version row is clustered by the time of the
 * version before it, `(prev DESC, valid_from ASC)`, so the slice `prev <= asOf` answers an as-of get with its validTo in
 * one read. This module holds the layout's two rules, free of Cassandra: what a put writes, and how a slice is read.
 */

/** `prev` of a key's first version (Long.MIN in the table). */
export const NO_PREV = Number.NEGATIVE_INFINITY;

/** One row: version `from`, written when `prev` was the key's version before it; a marker carries no value. */
export interface EdgeRow<V> {
  prev: number;
  from: number;
  marker: boolean;
  value?: V;
}

/** The rows a put writes, given every version time of the key (ascending) before it. */
export function edgeRowsForPut<V>(versions: readonly number[], t: number, value: V): EdgeRow<V>[] {
  const at = lowerBound(versions, t);
  const prev = at > 0 ? versions[at - 1] : NO_PREV;
  const rows: EdgeRow<V>[] = [{ prev, from: t, marker: false, value }];
  // A late version between two others: its successor gets a row under it (a rewrite of t changes no neighbour).
  if (versions[at] !== t && at < versions.length) rows.push({ prev: t, from: versions[at], marker: true });
  return rows;
}

/** The version valid at `asOf` read from a slice `prev <= asOf` in table order; 'more' when its value row lies beyond the slice. */
export function answerFromSlice<V>(
  slice: readonly EdgeRow<V>[],
  asOf: number,
): { from: number; validTo: number | null; value: V | undefined } | null | 'more' {
  if (slice.length === 0) return null;
  const first = slice[0];
  const newest = first.from <= asOf;
  if (!newest && first.prev === NO_PREV) return null;
  const from = newest ? first.from : first.prev;
  const hit = slice.find((r) => r.from === from && !r.marker);
  if (hit === undefined) return 'more';
  return { from, validTo: newest ? null : first.from, value: hit.value };
}

/** Orders rows as the table does: prev descending, then valid_from ascending. */
export function tableOrder<V>(a: EdgeRow<V>, b: EdgeRow<V>): number {
  return a.prev !== b.prev ? (a.prev > b.prev ? -1 : 1) : a.from - b.from;
}

function lowerBound(a: readonly number[], t: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
