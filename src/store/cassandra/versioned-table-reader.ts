import { types } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { Serde, VersionedRecord } from '../types';
import { deserializeWith } from '../validation';
import { CqlExecutor, toNumber } from './cql-executor';
import { bucketOfHash } from './key-bucket';
import { keyHash } from './key-hash';
import { TableRef, VersionedReadStatements, VersionedStatements, versionedStatements } from './layout';
import { pagedRows } from './paging';

/**
 * Where a key's versions live: its serialised key, plus for partitioned tables either the source partition or the
 * candidate partitions (`partition IN ?`, for readers that do not know it; a key lives in one source partition).
 */
export interface RowLocator {
  key: Buffer;
  partition?: number;
  partitions?: number[];
}

/** One stored version as bytes: valid_from, the value (null = tombstone), its writer and (partitioned) partition. */
export interface RawVersion {
  validFrom: number;
  value: Buffer | null;
  /** Writer identity that wrote it (null for rows written before the writer column existed). */
  writer?: string | null;
  /** Source partition (partitioned tables). */
  partition?: number;
}

/** A non-tombstone version with its validTo (undefined for the latest). */
export interface RawHistoryEntry {
  validFrom: number;
  validTo?: number;
  value: Buffer;
}

/** The version stored as of a time (possibly a tombstone or null) and the time of the key's next version after it. */
export interface AsOfPair {
  floor: RawVersion | null;
  /** The next version: only its valid_from is read (it is the floor's validTo; a tombstone counts). */
  next: Pick<RawVersion, 'validFrom'> | null;
}

const HISTORY_FETCH_SIZE = 100;

function toVersion(row: types.Row | undefined | null): RawVersion | null {
  if (!row) return null;
  const value = row.value as Buffer | null | undefined;
  const v: RawVersion = {
    validFrom: toNumber(row.valid_from),
    value: value ?? null,
    writer: (row.writer as string | null | undefined) ?? null,
  };
  if (row.partition !== undefined && row.partition !== null) v.partition = Number(row.partition);
  return v;
}

/**
 * KIP-889 get(key, asOf) from the version stored as of asOf and the next one, given the retention horizon of the key's
 * writer: below the horizon only the newest version answers (no validTo); otherwise validTo is the next version's time.
 */
export function asOfAnswer(pair: AsOfPair, asOf: number, horizon: number): { version: RawVersion; validTo?: number } | null {
  const { floor, next } = pair;
  if (floor === null || floor.value === null) return null;
  if (asOf < horizon) return next === null ? { version: floor } : null;
  return next === null ? { version: floor } : { version: floor, validTo: next.validFrom };
}

/**
 * Consumes versions in descending valid_from order (all with valid_from <= toTime) and returns, newest first,
 * the non-tombstone versions with validTo > fromTime and validTo > horizon. `topValidTo` is the validTo of the first row.
 * Rows of one valid_from from several writers (a key that moved between source partitions) count once: the first,
 * whose writer sorts first, as the as-of read (`LIMIT 1`) answers.
 */
export async function collectHistory(
  rowsDesc: AsyncIterable<RawVersion>,
  topValidTo: number | undefined,
  fromTime: number,
  horizon: number,
  maxEntries = Number.POSITIVE_INFINITY,
): Promise<RawHistoryEntry[]> {
  const out: RawHistoryEntry[] = [];
  let validTo = topValidTo;
  let previous: number | undefined;
  for await (const row of rowsDesc) {
    if (row.validFrom === previous) continue;
    previous = row.validFrom;
    if (out.length >= maxEntries) break;
    if (validTo !== undefined && (validTo <= horizon || validTo <= fromTime)) break;
    if (row.value !== null) {
      const e: RawHistoryEntry = { validFrom: row.validFrom, value: row.value };
      if (validTo !== undefined) e.validTo = validTo;
      out.push(e);
    }
    if (row.validFrom <= fromTime) break;
    validTo = row.validFrom;
  }
  return out;
}

/** Decodes history entries (newest first) to records, in the requested order. */
export function historyRecords<V>(entries: RawHistoryEntry[], valueSerde: Serde<V>, order: 'asc' | 'desc'): VersionedRecord<V>[] {
  const out = entries.map((e) => {
    const rec: VersionedRecord<V> = { value: deserializeWith(valueSerde, e.value, 'value'), timestamp: e.validFrom };
    if (e.validTo !== undefined) rec.validTo = e.validTo;
    return rec;
  });
  return order === 'asc' ? out.reverse() : out;
}

/** Read side of a versioned table (bytes in, bytes out); used by the store and by lookups in other processes. */
export class VersionedTableReader implements VersionReads {
  /** The CQL of every statement on this table. */
  readonly cql: VersionedStatements;

  constructor(
    readonly exec: CqlExecutor,
    readonly ref: TableRef,
  ) {
    this.cql = versionedStatements(ref);
  }

  /** The partition to locate rows with: checked for partitioned tables, undefined for global ones (validate once, reuse). */
  partitionFor(partition: number | undefined): number | undefined {
    if (this.ref.scope !== 'partitioned') return undefined;
    if (partition === undefined || !Number.isInteger(partition)) {
      throw new InvalidArgumentError('a partitioned versioned table needs the source partition');
    }
    return partition;
  }

  /** The key-hash bucket of an encoded key in a bucketed table, else undefined. */
  bucketFor(key: Buffer, hash?: number): number | undefined {
    if (this.ref.scope !== 'partitioned' || this.ref.buckets === undefined) return undefined;
    return bucketOfHash(hash ?? keyHash(key), this.ref.buckets);
  }

  /** Bind values locating a key's rows in one Cassandra partition: `[key]`, `[partition, key]` or `[partition, bucket, key]`. */
  rowKey(key: Buffer, partition: number | undefined, bucket = this.bucketFor(key)): unknown[] {
    if (partition === undefined) return [key];
    return bucket === undefined ? [partition, key] : [partition, bucket, key];
  }

  /** The INSERT's bind values of one version row: rowKey's values, then valid_from, value and writer (one array literal). */
  insertValues(
    key: Buffer,
    partition: number | undefined,
    bucket: number | undefined,
    validFrom: number | Buffer,
    value: Buffer | null,
    writer: Buffer,
  ): unknown[] {
    if (partition === undefined) return [key, validFrom, value, writer];
    return bucket === undefined ? [partition, key, validFrom, value, writer] : [partition, bucket, key, validFrom, value, writer];
  }

  /** The read statements and bind values locating a key's rows (a bucketed key is in one bucket of any partition). */
  private locate(loc: RowLocator): { q: VersionedReadStatements; params: unknown[] } {
    if (this.ref.scope === 'partitioned' && loc.partition === undefined && loc.partitions !== undefined) {
      const bucket = this.bucketFor(loc.key);
      return { q: this.cql.in, params: bucket === undefined ? [loc.partitions, loc.key] : [loc.partitions, bucket, loc.key] };
    }
    return { q: this.cql, params: this.rowKey(loc.key, this.partitionFor(loc.partition)) };
  }

  /** The newest stored version (possibly a tombstone): one read. */
  async latest(loc: RowLocator): Promise<RawVersion | null> {
    const { q, params } = this.locate(loc);
    const rs = await this.exec.read(q.latest, params, 'read latest version');
    return toVersion(rs.first());
  }

  /** The newest `limit` versions with valid_from <= t, newest first: one read. */
  async floor(loc: RowLocator, t: number, limit = 1): Promise<RawVersion[]> {
    const { q, params } = this.locate(loc);
    const rs = await this.exec.read(q.floor, [...params, this.exec.long(t), limit], 'read version as of');
    return rs.rows.map((r) => toVersion(r) as RawVersion);
  }

  /** The version stored as of t (valid_from <= t), possibly a tombstone: one read. */
  async asOf(loc: RowLocator, t: number): Promise<RawVersion | null> {
    return (await this.floor(loc, t, 1))[0] ?? null;
  }

  /** The oldest version with valid_from > t: one read. */
  async after(loc: RowLocator, t: number): Promise<RawVersion | null> {
    return toVersion(await this.firstAfter(loc, t, 'after'));
  }

  /** The valid_from of the oldest version with valid_from > t, or null: one read of that one column. */
  async nextValidFrom(loc: RowLocator, t: number): Promise<number | null> {
    const row = await this.firstAfter(loc, t, 'nextFrom');
    return row ? toNumber(row.valid_from) : null;
  }

  /** The first row of an `after` / `nextFrom` read (valid_from > t, oldest first). */
  private async firstAfter(loc: RowLocator, t: number, statement: 'after' | 'nextFrom'): Promise<types.Row | undefined> {
    const { q, params } = this.locate(loc);
    // Cassandra refuses ORDER BY with `partition IN ?` on a paged query; LIMIT 1 needs no paging.
    const extra = q === this.cql.in ? { fetchSize: 0 } : {};
    return (await this.exec.read(q[statement], [...params, this.exec.long(t)], 'read next version', extra)).first();
  }

  /**
   * The version stored as of t and the time of the next version after t (its validTo): two single-partition reads
   * issued in parallel, the second of valid_from alone.
   */
  async asOfWithNext(loc: RowLocator, t: number): Promise<AsOfPair> {
    const [floor, next] = await Promise.all([this.asOf(loc, t), this.nextValidFrom(loc, t)]);
    return { floor, next: next === null ? null : { validFrom: next } };
  }

  /** Versions with valid_from <= toTime (all if undefined), newest first, paged lazily. */
  async *versionsDesc(loc: RowLocator, toTime?: number): AsyncGenerator<RawVersion> {
    const { q, params } = this.locate(loc);
    const [cql, bound] = toTime === undefined ? [q.allDesc, params] : [q.upToDesc, [...params, this.exec.long(toTime)]];
    for await (const row of pagedRows(this.exec, cql, bound, 'read history', HISTORY_FETCH_SIZE)) {
      yield toVersion(row) as RawVersion;
    }
  }

  /**
   * KIP-968 history newest first. `horizonOf` gives the retention horizon of the key's writer, known from any of its
   * rows. When toTime is below it, only the newest version may answer (if a value with timestamp ≤ toTime, no validTo);
   * otherwise every version valid in [fromTime, toTime] whose validTo is after the horizon. Reads: the versions up to
   * toTime (paged) and the next version after toTime, in parallel.
   */
  async history(
    loc: RowLocator,
    fromTime: number,
    toTime: number,
    horizonOf: (version: RawVersion | null) => number | Promise<number>,
    maxEntries?: number,
  ): Promise<RawHistoryEntry[]> {
    if (fromTime > toTime) return [];
    const bounded = Number.isFinite(toTime);
    const rows = this.versionsDesc(loc, bounded ? toTime : undefined);
    const [next, first] = await Promise.all([bounded ? this.after(loc, toTime) : Promise.resolve(null), rows.next()]);
    const top = first.done ? null : first.value;
    return historyFrom({ top, rest: rows, next }, { fromTime, toTime, horizonOf, maxEntries });
  }
}

/** The read side of a versioned table, whatever its layout: what the store and the lookup library read with. */
export interface VersionReads {
  readonly exec: CqlExecutor;
  readonly ref: TableRef;
  /** The newest stored version (possibly a tombstone). */
  latest(loc: RowLocator): Promise<RawVersion | null>;
  /** The version stored as of t, possibly a tombstone. */
  asOf(loc: RowLocator, t: number): Promise<RawVersion | null>;
  /** The valid_from of the oldest version after t, or null. */
  nextValidFrom(loc: RowLocator, t: number): Promise<number | null>;
  /** The version stored as of t and the time of the next one (its validTo). */
  asOfWithNext(loc: RowLocator, t: number): Promise<AsOfPair>;
  /** KIP-968 history newest first (see VersionedTableReader.history). */
  history(
    loc: RowLocator,
    fromTime: number,
    toTime: number,
    horizonOf: (version: RawVersion | null) => number | Promise<number>,
    maxEntries?: number,
  ): Promise<RawHistoryEntry[]>;
}

/** A key's versions up to a history's toTime: the newest, the older ones (newest first) and the next version's time after toTime. */
export interface HistoryRows {
  top: RawVersion | null;
  rest: AsyncIterator<RawVersion> & AsyncIterable<RawVersion>;
  /** The oldest version after toTime (its valid_from is the top's validTo; its writer may give the horizon). */
  next: RawVersion | null;
}

/**
 * The history rule shared by every layout: when toTime is below the horizon of the key's writer (known from its newest
 * version up to toTime, or the next one), only that newest version may answer, without validTo; otherwise every
 * version valid in [fromTime, toTime] whose validTo is after the horizon.
 */
export async function historyFrom(
  rows: HistoryRows,
  o: { fromTime: number; toTime: number; horizonOf: (version: RawVersion | null) => number | Promise<number>; maxEntries?: number },
): Promise<RawHistoryEntry[]> {
  const { top, rest, next } = rows;
  const horizon = await o.horizonOf(top ?? next);
  if (o.toTime < horizon) {
    await rest.return?.(undefined);
    return next === null && top !== null && top.value !== null ? [{ validFrom: top.validFrom, value: top.value }] : [];
  }
  async function* replay(): AsyncGenerator<RawVersion> {
    if (top === null) return;
    yield top;
    yield* rest;
  }
  return collectHistory(replay(), next?.validFrom, o.fromTime, horizon, o.maxEntries);
}
