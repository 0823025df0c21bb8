import { types } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { Serde, VersionedRecord } from '../types';
import { deserializeWith } from '../validation';
import { CqlExecutor, toNumber } from './cql-executor';
import { TableRef, VersionedStatements, versionedStatements } from './layout';
import { readerTable, TableReaderOptions } from './open-common';
import { pagedRows } from './paging';

/** Where a key's versions live: its serialised key, plus the source partition for partitioned tables. */
export interface RowLocator {
  key: Buffer;
  partition?: number;
}

/** One stored version as bytes: valid_from and the value (null = tombstone). */
export interface RawVersion {
  validFrom: number;
  value: Buffer | null;
}

/** A stored version found by a `partition IN ?` read, with the source partition it lives in. */
export type PartitionedVersion = RawVersion & { partition: number };

/** A non-tombstone version with its validTo (undefined for the latest). */
export interface RawHistoryEntry {
  validFrom: number;
  validTo?: number;
  value: Buffer;
}

const HISTORY_FETCH_SIZE = 100;

function toVersion(row: types.Row | undefined | null): RawVersion | null {
  if (!row) return null;
  const value = row.value as Buffer | null | undefined;
  return { validFrom: toNumber(row.valid_from), value: value ?? null };
}

/**
 * Consumes versions in descending valid_from order (all with valid_from <= toTime) and returns, newest first,
 * the non-tombstone versions with validTo > fromTime and validTo > horizon. `topValidTo` is the validTo of the first row.
 */
export async function collectHistory(
  rowsDesc: AsyncIterable<RawVersion>,
  topValidTo: number | undefined,
  fromTime: number,
  horizon: number,
): Promise<RawHistoryEntry[]> {
  const out: RawHistoryEntry[] = [];
  let validTo = topValidTo;
  for await (const row of rowsDesc) {
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
export class VersionedTableReader {
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

  /** Bind values locating a key's rows. */
  locate(loc: RowLocator): unknown[] {
    const partition = this.partitionFor(loc.partition);
    return partition === undefined ? [loc.key] : [partition, loc.key];
  }

  /** The newest stored version (possibly a tombstone): one read. */
  async latest(loc: RowLocator): Promise<RawVersion | null> {
    const rs = await this.exec.read(this.cql.latest, this.locate(loc), 'read latest version');
    return toVersion(rs.first());
  }

  /** The newest `limit` versions with valid_from <= t, newest first: one read. */
  async floor(loc: RowLocator, t: number, limit = 1): Promise<RawVersion[]> {
    const rs = await this.exec.read(this.cql.floor, [...this.locate(loc), this.exec.long(t), limit], 'read version as of');
    return rs.rows.map((r) => toVersion(r) as RawVersion);
  }

  /** The version stored as of t (valid_from <= t), possibly a tombstone: one read. */
  async asOf(loc: RowLocator, t: number): Promise<RawVersion | null> {
    return (await this.floor(loc, t, 1))[0] ?? null;
  }

  /** The oldest version with valid_from > t: one read. */
  async after(loc: RowLocator, t: number): Promise<RawVersion | null> {
    const rs = await this.exec.read(this.cql.after, [...this.locate(loc), this.exec.long(t)], 'read next version');
    return toVersion(rs.first());
  }

  /** Partitioned tables: the newest version (t undefined) or the newest with valid_from <= t of a key in any of parts: one read. */
  async newestIn(parts: number[], key: Buffer, t?: number): Promise<PartitionedVersion | null> {
    const rs =
      t === undefined
        ? await this.exec.read(this.cql.latestIn, [parts, key], 'read latest version')
        : await this.exec.read(this.cql.floorIn, [parts, key, this.exec.long(t)], 'read version as of');
    const r = rs.first();
    if (!r) return null;
    return { partition: Number(r.partition), validFrom: toNumber(r.valid_from), value: (r.value as Buffer | null) ?? null };
  }

  /** Versions with valid_from <= toTime (all if undefined), newest first, paged lazily. */
  async *versionsDesc(loc: RowLocator, toTime?: number): AsyncGenerator<RawVersion> {
    const [q, params] =
      toTime === undefined ? [this.cql.allDesc, this.locate(loc)] : [this.cql.upToDesc, [...this.locate(loc), this.exec.long(toTime)]];
    for await (const row of pagedRows(this.exec, q, params, 'read history', HISTORY_FETCH_SIZE)) {
      yield toVersion(row) as RawVersion;
    }
  }

  /** KIP-968 history newest first: versions valid in [fromTime, toTime], excluding tombstones and versions expired at horizon. */
  async history(loc: RowLocator, fromTime: number, toTime: number, horizon = Number.NEGATIVE_INFINITY): Promise<RawHistoryEntry[]> {
    if (fromTime > toTime) return [];
    if (!Number.isFinite(toTime)) return collectHistory(this.versionsDesc(loc), undefined, fromTime, horizon);
    const rows = this.versionsDesc(loc, toTime);
    const [next, first] = await Promise.all([this.after(loc, toTime), rows.next()]);
    async function* replay(): AsyncGenerator<RawVersion> {
      if (first.done) return;
      yield first.value;
      yield* rows;
    }
    return collectHistory(replay(), next?.validFrom, fromTime, horizon);
  }
}

/** Options of openVersionedTableReader. */
export type VersionedTableReaderOptions = TableReaderOptions;

/** Validates names and builds a reader on an existing versioned table (no schema changes, no CQL sent). */
export function openVersionedTableReader(options: VersionedTableReaderOptions): VersionedTableReader {
  const { exec, ref } = readerTable(options);
  return new VersionedTableReader(exec, ref);
}
