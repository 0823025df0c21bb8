/**
 * The edge layout of a versioned table: each version row is clustered by the time of the version before it,
 * `(prev DESC, valid_from ASC, writer ASC)`, so the slice `prev <= asOf` answers an as-of get with its validTo in one
 * read. This module holds the layout's rules, free of Cassandra: what a put writes, how a slice is read, and what a
 * writer knows of a key's version times.
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

/** The version valid at an as-of time, read from a slice: its time, its validTo (null: newest) and its value row. */
export interface SliceAnswer<V> {
  from: number;
  validTo: number | null;
  row: EdgeRow<V>;
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

/**
 * The version valid at `asOf` read from a slice `prev <= asOf` in table order: null when none, 'more' when its value
 * row lies beyond the slice (read on with `valueRowOf`).
 */
export function answerFromSlice<V>(slice: readonly EdgeRow<V>[], asOf: number): SliceAnswer<V> | null | 'more' {
  const head = sliceHead(slice, asOf);
  if (head === null) return null;
  const row = valueRowOf(slice, head.from);
  return row === undefined ? 'more' : { from: head.from, validTo: head.validTo, row };
}

/**
 * What the first row of a slice `prev <= asOf` tells: the floor's time and its validTo. It is the floor's successor
 * (prev = floor), or the floor itself when that is the key's newest version; none when it is the first version's row
 * and lies after asOf.
 */
export function sliceHead<V>(slice: readonly EdgeRow<V>[], asOf: number): { from: number; validTo: number | null } | null {
  if (slice.length === 0) return null;
  const first = slice[0];
  const newest = first.from <= asOf;
  if (!newest && first.prev === NO_PREV) return null;
  return newest ? { from: first.from, validTo: null } : { from: first.prev, validTo: first.from };
}

/**
 * The bound of the slice `prev <= bound` that starts just below version `from`: every row of `from` (its value rows
 * and markers) has an earlier `prev`, so this slice holds them in table order without the links of its successors.
 * Times are whole milliseconds.
 */
export function valueRowBound(from: number): number {
  return from - 1;
}

/** The value row of version `from` in rows in table order: the first that is not a marker (the latest written). */
export function valueRowOf<V>(rows: readonly EdgeRow<V>[], from: number): EdgeRow<V> | undefined {
  for (const r of rows) if (r.from === from && !r.marker) return r;
  return undefined;
}

/** Orders rows as the table does: prev descending, then valid_from ascending, markers first. */
export function tableOrder<V>(a: EdgeRow<V>, b: EdgeRow<V>): number {
  if (a.prev !== b.prev) return a.prev > b.prev ? -1 : 1;
  if (a.from !== b.from) return a.from - b.from;
  return a.marker === b.marker ? 0 : a.marker ? -1 : 1;
}

/** What a put writes: its value row's prev, and the successor that gets a marker under it (late versions only). */
export interface EdgePlan {
  prev: number;
  /** The next version after the put's (its validTo), or undefined when it is the newest. */
  next?: number;
  /** True when a marker `(t, next)` is written (t is a new version before `next`). */
  marker: boolean;
}

/**
 * A writer's knowledge of one key's version times: the newest `times` (ascending, every version from times[0] up to
 * the newest), and whether times[0] is the key's first version.
 */
export interface KnownTimes {
  times: number[];
  complete: boolean;
}

/** Plans a put of t from what is known of the key, or undefined when a read is needed (t at or below the known window). */
export function planFromKnown(known: KnownTimes, t: number): EdgePlan | undefined {
  const { times } = known;
  if (!known.complete && (times.length === 0 || t <= times[0])) return undefined;
  const n = times.length;
  // The common put is newer than every known time (or the first of a key known to have none): no search, and no read
  // past the array's end (a slow path in V8).
  if (n === 0) return { prev: NO_PREV, next: undefined, marker: false };
  if (t > times[n - 1]) return { prev: times[n - 1], next: undefined, marker: false };
  const at = lowerBound(times, t); // < n: times[n - 1] >= t
  const prev = at > 0 ? times[at - 1] : NO_PREV;
  const rewrite = times[at] === t;
  const next = rewrite ? (at + 1 < n ? times[at + 1] : undefined) : times[at];
  return { prev, next, marker: !rewrite && next !== undefined };
}

/**
 * Records a planned put of t in what is known (bounded to `ring` times; dropping the oldest makes it incomplete). Moves
 * times with plain loops: Array.prototype.copyWithin, splice and shift cost about 1.2 µs on a 16-time array against
 * 35 ns for the loop (node 20), and most puts of a busy key shift a full ring.
 */
export function rememberPut(known: KnownTimes, t: number, ring: number): void {
  const { times } = known;
  const n = times.length;
  if (n > 0 && t > times[n - 1]) {
    if (n < ring) times.push(t);
    else dropOldestInsert(known, n - 1, t);
    return;
  }
  const at = lowerBound(times, t);
  if (times[at] === t) return;
  if (n < ring) {
    times.push(t);
    for (let i = n; i > at; i--) times[i] = times[i - 1];
    times[at] = t;
  } else if (at === 0) {
    // Full, and t older than every time kept: it would be the one dropped.
    known.complete = false;
  } else dropOldestInsert(known, at - 1, t);
}

/** A full ring: the oldest time goes, the ones up to `slot` move down one, and t takes `slot`. */
function dropOldestInsert(known: KnownTimes, slot: number, t: number): void {
  const { times } = known;
  for (let i = 0; i < slot; i++) times[i] = times[i + 1];
  times[slot] = t;
  known.complete = false;
}

/**
 * Plans a put of t from the answer of a read of the slice `prev <= t` (`read`: null when no version is at or below t;
 * `first`: the key's first version when `read` is null, else undefined). Returns the plan and, when t is then the key's
 * newest version, what is known of the key afterwards.
 */
export function planFromRead<V>(read: SliceAnswer<V> | null, first: number | undefined, t: number): { plan: EdgePlan; known?: KnownTimes } {
  if (read === null) {
    if (first === undefined) return { plan: { prev: NO_PREV, marker: false }, known: { times: [t], complete: true } };
    return { plan: { prev: NO_PREV, next: first, marker: true } };
  }
  const validTo = read.validTo ?? undefined;
  if (read.from === t) {
    // A rewrite: the value row written last is replaced in place (its prev is that of the row that answered).
    return {
      plan: { prev: read.row.prev, next: validTo, marker: false },
      known: validTo === undefined ? { times: [t], complete: false } : undefined,
    };
  }
  if (validTo === undefined) return { plan: { prev: read.from, marker: false }, known: { times: [read.from, t], complete: false } };
  return { plan: { prev: read.from, next: validTo, marker: true } };
}

/** The first index of a sorted array whose value is ≥ t. */
export function lowerBound(a: readonly number[], t: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
