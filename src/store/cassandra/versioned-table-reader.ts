import { types } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { StoreScope } from '../types';
import { CqlExecutor, ExecutionSettings, toNumber } from './cql-executor';
import { tableNameForStore, validateKeyspaceName, validateTableName } from './identifiers';
import { TableRef, VersionedStatements, versionedStatements } from './layout';
import { pagedRows } from './paging';
import { Client } from 'cassandra-driver';

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

  /** Bind values locating a key's rows. */
  locate(loc: RowLocator): unknown[] {
    if (this.ref.scope === 'partitioned') {
      if (loc.partition === undefined || !Number.isInteger(loc.partition)) {
        throw new InvalidArgumentError('a partitioned versioned table needs the source partition');
      }
      return [loc.partition, loc.key];
    }
    return [loc.key];
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
export interface VersionedTableReaderOptions extends ExecutionSettings {
  client: Client;
  keyspace: string;
  scope: StoreScope;
  /** Store name (normalised to the table name) or an explicit table name. */
  storeName?: string;
  tableName?: string;
}

/** Validates names and builds a reader on an existing versioned table (no schema changes, no CQL sent). */
export function openVersionedTableReader(options: VersionedTableReaderOptions): VersionedTableReader {
  const keyspace = validateKeyspaceName(options.keyspace);
  const table = options.tableName !== undefined ? validateTableName(options.tableName) : tableNameForStore(options.storeName);
  if (options.scope !== 'partitioned' && options.scope !== 'global') throw new InvalidArgumentError(`invalid scope ${String(options.scope)}`);
  const exec = new CqlExecutor(options.client, options, { keyspace, table });
  return new VersionedTableReader(exec, { keyspace, table, scope: options.scope });
}
