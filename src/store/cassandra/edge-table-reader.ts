import { types } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { CqlExecutor, toNumber } from './cql-executor';
import { qualified, TableRef } from './layout';
import { pagedRows } from './paging';
import { replicaGroupOf } from './replica-group';
import { answerFromSlice, EdgeRow, NO_PREV, SliceAnswer, sliceHead, valueRowBound, valueRowOf } from './version-edges';
import { AsOfPair, HistoryRows, historyFrom, RawVersion, RowLocator, VersionReads } from './versioned-table-reader';

/** The `writer` of a marker row (writer identities are never empty): a row that links two versions and carries no value. */
export const MARKER_WRITER = '';

/** Rows of a slice read: the floor's successor, and in most cases the floor's value row right after it. */
const SLICE_LIMIT = 2;
/**
 * Rows of the second read, from just below the floor: its value row lies past markers or rows made stale, third after
 * one late version (marker, the late version's row, the stale row). Every row read costs Cassandra alike, so more late
 * versions under one floor page on instead of every second read reading more.
 */
const VALUE_ROW_LIMIT = 4;
/** Rows of a grouped read of keys seen first, per key (values are not read, so more rows cost little). */
const FIRST_ROWS_LIMIT = 4;
const PAGE = 100;
/** Long.MIN, the `prev` of a key's first version. */
const LONG_MIN = types.Long.MIN_VALUE;
/** The slice bound of a latest read (no version time is above it). */
const ANY_TIME = Number.MAX_SAFE_INTEGER;

/** CQL text of every statement on an edge-layout table. */
export interface EdgeStatements {
  insert: string;
  /** The first `LIMIT ?` rows with prev <= ?, in table order. */
  slice: string;
  /** Every row with prev <= ?, in table order (paged). */
  sliceAll: string;
  /** The first `FIRST_ROWS_LIMIT` rows of each key IN ?, in table order, without the values (grouped reads of keys seen first). */
  firstRows: string;
  /** Range delete of the rows with prev < ?. */
  deleteBelow: string;
}

/** Builds the statements of an edge-layout table (names already validated). */
export function edgeStatements(ref: TableRef): EdgeStatements {
  const t = qualified(ref);
  const sel = `SELECT prev, valid_from, value, writer FROM ${t} WHERE key = ? AND prev <= ?`;
  return {
    insert: `INSERT INTO ${t} (key, prev, valid_from, value, writer) VALUES (?, ?, ?, ?, ?)`,
    slice: `${sel} LIMIT ?`,
    sliceAll: sel,
    firstRows: `SELECT key, prev, valid_from, writer FROM ${t} WHERE key IN ? PER PARTITION LIMIT ${FIRST_ROWS_LIMIT}`,
    deleteBelow: `DELETE FROM ${t} WHERE key = ? AND prev < ?`,
  };
}

/** A row of an edge table as read: its link, and its version as a RawVersion (value null for markers and tombstones). */
export type StoredEdge = EdgeRow<RawVersion>;

function toEdge(row: types.Row): StoredEdge {
  const prevCell = row.prev as types.Long | bigint;
  const prev = (prevCell instanceof types.Long ? prevCell.equals(LONG_MIN) : prevCell === BigInt(LONG_MIN.toString()))
    ? NO_PREV
    : toNumber(prevCell);
  const from = toNumber(row.valid_from);
  const writer = (row.writer as string | null) ?? null;
  const value = (row.value as Buffer | null | undefined) ?? null;
  return { prev, from, marker: writer === MARKER_WRITER, value: { validFrom: from, value, writer } };
}

const NO_ANSWER: EdgeSliceRead = Object.freeze({ answer: null });

function sameRead(s: EdgeSliceRead): EdgeSliceRead {
  return s;
}

function versionOf(s: EdgeSliceRead): RawVersion | null {
  return s.answer?.row.value ?? null;
}

function pairOf({ answer }: EdgeSliceRead): AsOfPair {
  if (answer === null) return { floor: null, next: null };
  return { floor: answer.row.value!, next: answer.validTo === null ? null : { validFrom: answer.validTo } };
}

/** What a slice read found: the answer as of its time, and the key's first version when that lies after it. */
export interface EdgeSliceRead {
  answer: SliceAnswer<RawVersion> | null;
  /** When answer is null: the valid_from of the key's first version (after the slice's time), or undefined (no versions). */
  first?: number;
}

/** One key of a grouped read, and the time its slice is read as of. */
export interface SliceRequest {
  key: Buffer;
  t: number;
}

/**
 * What the slice `prev <= t` answers, from a key's first rows in table order (read without a bound on prev, at most
 * FIRST_ROWS_LIMIT of them), or undefined when they cannot tell: a row with prev after t (the slice starts further on), or a
 * value row beyond them. When every row has prev <= t they are the slice's own first rows.
 */
export function sliceFromFirstRows(rows: readonly StoredEdge[], t: number): EdgeSliceRead | undefined {
  if (rows.length === 0) return { answer: null };
  if (rows[0].prev > t) return undefined;
  const answer = answerFromSlice(rows, t);
  if (answer === 'more') return undefined;
  return answer === null ? { answer: null, first: rows[0].from } : { answer };
}

/**
 * Read side of an edge-layout table. An as-of get with its validTo, a latest get and an as-of value are each one read
 * of `LIMIT 2` rows; when the floor's value row is not the second (a late version left a marker or a stale row between
 * them), a second read of up to 4 rows from just below the floor follows, paged on only past those. History is one
 * paged read.
 */
export class EdgeTableReader implements VersionReads {
  /** The CQL of every statement on this table. */
  readonly edges: EdgeStatements;
  private replicaGroup?: (key: Buffer) => string;

  constructor(
    readonly exec: CqlExecutor,
    readonly ref: TableRef,
  ) {
    if (ref.scope !== 'global') throw new InvalidArgumentError('the edge layout is for versioned global tables');
    this.edges = edgeStatements(ref);
  }

  /** The version as of t with its validTo, or (none) the key's first version after t: one read, two when the value row lies further. */
  slice(key: Buffer, t: number, abandoned?: () => boolean): Promise<EdgeSliceRead> {
    return this.sliceAs(key, t, sameRead, abandoned);
  }

  /**
   * `slice(key, t)` mapped by `as` in the read's own continuation: a point read of the lookup library is the request
   * and one step after it (no async frame per layer), and the second read only when the value row lies further.
   */
  private sliceAs<T>(key: Buffer, t: number, as: (s: EdgeSliceRead) => T, abandoned?: () => boolean): Promise<T> {
    const read = this.exec.read(this.edges.slice, [key, this.exec.long(t), SLICE_LIMIT], 'read version as of', undefined, abandoned);
    return read.then((rs): T | Promise<T> => {
      const rows = rs.rows.map(toEdge);
      const answer = answerFromSlice(rows, t);
      if (answer === null) return as(rows.length === 0 ? NO_ANSWER : { answer: null, first: rows[0].from });
      if (answer !== 'more') return as({ answer });
      const head = sliceHead(rows, t)!;
      return this.valueRow(key, head.from, abandoned).then((row) => as({ answer: { ...head, row } }));
    });
  }

  /**
   * The value row of version `from`: one read of up to VALUE_ROW_LIMIT rows of the slice just below it, then pages of
   * that slice past them. A tombstone's row when none is left.
   */
  private async valueRow(key: Buffer, from: number, abandoned?: () => boolean): Promise<StoredEdge> {
    const bound = this.exec.long(valueRowBound(from));
    const rs = await this.exec.read(this.edges.slice, [key, bound, VALUE_ROW_LIMIT], 'read version as of', undefined, abandoned);
    const found = valueRowOf(rs.rows.map(toEdge), from);
    if (found !== undefined) return found;
    if (rs.rows.length === VALUE_ROW_LIMIT) {
      for await (const row of pagedRows(this.exec, this.edges.sliceAll, [key, bound], 'read version as of', PAGE)) {
        const edge = toEdge(row);
        if (edge.from === from && !edge.marker) return edge;
      }
    }
    // Only a row deleted between the two reads (a retention clean-up of an expired version) ends here.
    return { prev: NO_PREV, from, marker: false, value: { validFrom: from, value: null } };
  }

  /**
   * For each request, what `slice(key, t)` would answer, read for all of them at once: one read of the first rows of
   * every key (the keys must share a replica set: the read is routed to the first key's replicas), without values.
   * undefined where those rows do not settle it (a row after t, or a value row further on): `slice` it then.
   * Values are not read: the answers' rows carry their links with null values (enough to plan a put, not to answer a get).
   */
  async firstSlices(reqs: readonly SliceRequest[], abandoned?: () => boolean): Promise<(EdgeSliceRead | undefined)[]> {
    const keys = reqs.map((r) => r.key);
    const rs = await this.exec.read(this.edges.firstRows, [keys], 'read versions of keys seen first', { routingKey: keys[0] }, abandoned);
    const byKey = new Map<string, StoredEdge[]>();
    for (const row of rs.rows) {
      const id = (row.key as Buffer).toString('latin1');
      let rows = byKey.get(id);
      if (rows === undefined) byKey.set(id, (rows = []));
      rows.push(toEdge(row));
    }
    return reqs.map((r) => sliceFromFirstRows(byKey.get(r.key.toString('latin1')) ?? [], r.t));
  }

  /** The replica group of a key (its replica set; one group on a single node): the keys one firstSlices read may hold. */
  groupOf(key: Buffer): string {
    this.replicaGroup ??= replicaGroupOf(this.exec, this.ref.keyspace);
    return this.replicaGroup(key);
  }

  /** The newest stored version (possibly a tombstone): one read. */
  latest(loc: RowLocator): Promise<RawVersion | null> {
    return this.sliceAs(loc.key, ANY_TIME, versionOf);
  }

  /** The version stored as of t, possibly a tombstone: one read. */
  asOf(loc: RowLocator, t: number): Promise<RawVersion | null> {
    return this.sliceAs(loc.key, t, versionOf);
  }

  /** The valid_from of the oldest version after t, or null: one read. */
  nextValidFrom(loc: RowLocator, t: number): Promise<number | null> {
    return this.sliceAs(loc.key, t, ({ answer, first }) => (answer === null ? (first ?? null) : answer.validTo));
  }

  /** The version stored as of t and the time of the next version after t: one read. */
  asOfWithNext(loc: RowLocator, t: number): Promise<AsOfPair> {
    return this.sliceAs(loc.key, t, pairOf);
  }

  /** Every row with prev <= t, in table order (paged reads; history and the retention clean-up). */
  async rowsUpTo(key: Buffer, t: number, what = 'read expired versions'): Promise<StoredEdge[]> {
    const out: StoredEdge[] = [];
    for await (const row of pagedRows(this.exec, this.edges.sliceAll, [key, this.exec.long(t)], what, PAGE)) out.push(toEdge(row));
    return out;
  }

  /**
   * Every row with prev <= t (all when t is infinite), paged, folded into the key's versions up to t: each with its value
   * row (the first in table order that is not a marker; value null when none is left), and the first version after t.
   */
  async versionsUpTo(key: Buffer, t: number): Promise<{ versions: RawVersion[]; next: number | null; nextWriter: string | null }> {
    const byTime = new Map<number, RawVersion>();
    let next: StoredEdge | null = null;
    for (const e of await this.rowsUpTo(key, Number.isFinite(t) ? t : ANY_TIME, 'read history')) {
      if (e.from > t) {
        if (next === null || e.from < next.from || (e.from === next.from && next.marker && !e.marker)) next = e;
        continue;
      }
      const had = byTime.get(e.from);
      if (had === undefined) byTime.set(e.from, e.marker ? { validFrom: e.from, value: null, writer: null } : e.value!);
      else if (had.writer === null && !e.marker) byTime.set(e.from, e.value!);
    }
    const versions = [...byTime.values()].sort((a, b) => b.validFrom - a.validFrom);
    return { versions, next: next?.from ?? null, nextWriter: next === null || next.marker ? null : (next.value!.writer ?? null) };
  }

  /** KIP-968 history newest first, with the same horizon rule as the rows layout (VersionedTableReader.history): one paged read. */
  readonly history: VersionReads['history'] = async (loc, fromTime, toTime, horizonOf, maxEntries) => {
    if (fromTime > toTime) return [];
    const { versions, next, nextWriter } = await this.versionsUpTo(loc.key, toTime);
    async function* older(): AsyncGenerator<RawVersion> {
      yield* versions.slice(1);
    }
    const rows: HistoryRows = {
      top: versions[0] ?? null,
      rest: older(),
      next: next === null ? null : { validFrom: next, value: null, writer: nextWriter },
    };
    return historyFrom(rows, { fromTime, toTime, horizonOf, maxEntries });
  };
}
