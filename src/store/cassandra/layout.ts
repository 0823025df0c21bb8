import { StoreScope } from '../types';

/** Name of the table holding per-writer stream time. */
export const STREAM_TIME_TABLE = 'adjunct_stream_time';

/** A store table: keyspace, table name and scope. Names must already be validated. */
export interface TableRef {
  keyspace: string;
  table: string;
  scope: StoreScope;
  /**
   * Partitioned scope: the key-hash buckets per source partition, so the Cassandra partition is `(partition, bucket)`.
   * Undefined: one Cassandra partition per source partition (the layout of tables created before buckets).
   */
  buckets?: number;
  /**
   * Versioned global tables: the edge layout, each version row clustered by the time of the version before it (see
   * version-edges.ts), so an as-of get with its validTo is one read. Undefined: rows clustered by their own time.
   */
  edges?: boolean;
}

/** The versioned table layouts: `rows` clustered by their own time, `edges` by their predecessor's (global scope). */
export const VERSIONED_LAYOUTS = ['rows', 'edges'] as const;

/** A versioned table layout. */
export type VersionedLayout = (typeof VERSIONED_LAYOUTS)[number];

/** True when a partitioned table's Cassandra partition is `(partition, bucket)`. */
function isBucketed(ref: { scope: StoreScope; buckets?: number }): boolean {
  return ref.scope === 'partitioned' && ref.buckets !== undefined;
}

/** The partition key columns of a partitioned table (`partition`, plus `bucket` when bucketed). */
function partitionedKey(ref: { scope: StoreScope; buckets?: number }): string[] {
  return isBucketed(ref) ? ['partition', 'bucket'] : ['partition'];
}

/** Fully qualified table name. */
export function qualified(ref: { keyspace: string; table: string }): string {
  return `${ref.keyspace}.${ref.table}`;
}

/**
 * Column definitions + primary key + clustering order of a versioned table. `writer` is the writer identity (as in
 * adjunct_stream_time) that wrote the version, so readers apply the stream time of the version's own source partition.
 * It is the last clustering column, not a regular cell: Cassandra then stores one cell per version (the value), and spent
 * ≈ 20% less CPU per record in the bench (README, CQL schema). Tables created before keep `writer` as a regular column.
 */
export function versionedTableDdl(ref: TableRef): { columns: string; clustering: string } {
  if (ref.edges === true) {
    return {
      columns: 'key blob, prev bigint, valid_from bigint, value blob, writer text, PRIMARY KEY ((key), prev, valid_from, writer)',
      clustering: 'CLUSTERING ORDER BY (prev DESC, valid_from ASC, writer ASC)',
    };
  }
  if (ref.scope === 'partitioned') {
    const bucket = isBucketed(ref) ? 'bucket int, ' : '';
    return {
      columns: `partition int, ${bucket}key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((${partitionedKey(ref).join(', ')}), key, valid_from, writer)`,
      clustering: 'CLUSTERING ORDER BY (key ASC, valid_from DESC, writer ASC)',
    };
  }
  return {
    columns: 'key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((key), valid_from, writer)',
    clustering: 'CLUSTERING ORDER BY (valid_from DESC, writer ASC)',
  };
}

/** Columns a versioned table created before the `writer` column existed lacks (added by ALTER TABLE on open). */
export const VERSIONED_ADDED_COLUMNS: { name: string; type: string }[] = [{ name: 'writer', type: 'text' }];

/** The int partition key columns of a KV table: `bucket` (global), `partition` or `partition, bucket` (partitioned). */
export function kvPartitionColumns(ref: { scope: StoreScope; buckets?: number }): string[] {
  return ref.scope === 'partitioned' ? partitionedKey(ref) : ['bucket'];
}

/** Column definitions + primary key + clustering order of a key-value table. */
export function kvTableDdl(ref: TableRef): { columns: string; clustering: string } {
  const pk = kvPartitionColumns(ref);
  return {
    columns: `${pk.map((c) => `${c} int, `).join('')}key blob, value blob, PRIMARY KEY ((${pk.join(', ')}), key)`,
    clustering: 'CLUSTERING ORDER BY (key ASC)',
  };
}

/** Column definitions of the stream-time metadata table. */
export const STREAM_TIME_DDL = {
  columns: 'store text, writer text, stream_time bigint, PRIMARY KEY ((store), writer)',
  clustering: '',
};

/** CQL text of the reads of a key's versions, for one way of locating them (one partition, or `partition IN ?`). */
export interface VersionedReadStatements {
  /** The newest version. */
  latest: string;
  /** The newest `LIMIT ?` versions with valid_from <= ?. */
  floor: string;
  /** The oldest version with valid_from > ?. */
  after: string;
  /** Only the valid_from of the oldest version with valid_from > ? (the validTo of the version as of ?). */
  nextFrom: string;
  /** Every version, newest first. */
  allDesc: string;
  /** Every version with valid_from <= ?, newest first. */
  upToDesc: string;
}

/** CQL text of every statement used on a versioned table. */
export interface VersionedStatements extends VersionedReadStatements {
  insert: string;
  deleteBefore: string;
  deleteUpTo: string;
  /** Partitioned tables: the same reads over `partition IN ?` (a key lives in one source partition; and one bucket). */
  in: VersionedReadStatements;
}

function readStatements(t: string, sel: string, loc: string, asc: string): VersionedReadStatements {
  return {
    latest: `SELECT ${sel} FROM ${t} WHERE ${loc} LIMIT 1`,
    floor: `SELECT ${sel} FROM ${t} WHERE ${loc} AND valid_from <= ? LIMIT ?`,
    after: `SELECT ${sel} FROM ${t} WHERE ${loc} AND valid_from > ? ${asc} LIMIT 1`,
    nextFrom: `SELECT valid_from FROM ${t} WHERE ${loc} AND valid_from > ? ${asc} LIMIT 1`,
    allDesc: `SELECT ${sel} FROM ${t} WHERE ${loc}`,
    upToDesc: `SELECT ${sel} FROM ${t} WHERE ${loc} AND valid_from <= ?`,
  };
}

/**
 * Builds the versioned-table statements; the row locator is `partition = ? AND bucket = ? AND key = ?` (bucketed),
 * `partition = ? AND key = ?` (partitioned, unbucketed) or `key = ?` (global).
 */
export function versionedStatements(ref: TableRef): VersionedStatements {
  const t = qualified(ref);
  const partitioned = ref.scope === 'partitioned';
  const bucket = isBucketed(ref) ? 'bucket = ? AND ' : '';
  const loc = partitioned ? `partition = ? AND ${bucket}key = ?` : 'key = ?';
  const asc = partitioned ? 'ORDER BY key DESC, valid_from ASC' : 'ORDER BY valid_from ASC';
  const sel = partitioned ? 'partition, writer, valid_from, value' : 'writer, valid_from, value';
  const names = versionedInsertColumns(ref);
  const cols = `(${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
  const single = readStatements(t, sel, loc, asc);
  return {
    insert: `INSERT INTO ${t} ${cols}`,
    ...single,
    deleteBefore: `DELETE FROM ${t} WHERE ${loc} AND valid_from < ?`,
    deleteUpTo: `DELETE FROM ${t} WHERE ${loc} AND valid_from <= ?`,
    in: partitioned ? readStatements(t, sel, `partition IN ? AND ${bucket}key = ?`, asc) : single,
  };
}

/** Columns of a versioned table's INSERT, in bind order (typed columns are appended after them). */
export function versionedInsertColumns(ref: { scope: StoreScope; buckets?: number }): string[] {
  return ref.scope === 'partitioned'
    ? [...partitionedKey(ref), 'key', 'valid_from', 'value', 'writer']
    : ['key', 'valid_from', 'value', 'writer'];
}
