import { StoreScope } from '../types';

/** Name of the table holding per-writer stream time. */
export const STREAM_TIME_TABLE = 'adjunct_stream_time';

/** A store table: keyspace, table name and scope. Names must already be validated. */
export interface TableRef {
  keyspace: string;
  table: string;
  scope: StoreScope;
}

/** Fully qualified table name. */
export function qualified(ref: { keyspace: string; table: string }): string {
  return `${ref.keyspace}.${ref.table}`;
}

/** Column definitions + primary key + clustering order of a versioned table. */
export function versionedTableDdl(ref: TableRef): { columns: string; clustering: string } {
  if (ref.scope === 'partitioned') {
    return {
      columns: 'partition int, key blob, valid_from bigint, value blob, PRIMARY KEY ((partition), key, valid_from)',
      clustering: 'CLUSTERING ORDER BY (key ASC, valid_from DESC)',
    };
  }
  return {
    columns: 'key blob, valid_from bigint, value blob, PRIMARY KEY ((key), valid_from)',
    clustering: 'CLUSTERING ORDER BY (valid_from DESC)',
  };
}

/** Name of the int partition column of a KV table: `partition` (partitioned) or `bucket` (global). */
export function kvPartitionColumn(scope: StoreScope): string {
  return scope === 'partitioned' ? 'partition' : 'bucket';
}

/** Column definitions + primary key + clustering order of a key-value table. */
export function kvTableDdl(ref: TableRef): { columns: string; clustering: string } {
  const pc = kvPartitionColumn(ref.scope);
  return { columns: `${pc} int, key blob, value blob, PRIMARY KEY ((${pc}), key)`, clustering: 'CLUSTERING ORDER BY (key ASC)' };
}

/** Column definitions of the stream-time metadata table. */
export const STREAM_TIME_DDL = {
  columns: 'store text, writer text, stream_time bigint, PRIMARY KEY ((store), writer)',
  clustering: '',
};

/** CQL text of every statement used on a versioned table. */
export interface VersionedStatements {
  insert: string;
  latest: string;
  floor: string;
  after: string;
  allDesc: string;
  upToDesc: string;
  deleteBefore: string;
  deleteUpTo: string;
  /** Partitioned tables: the newest version of a key in any of `partition IN ?` (selects the partition too). */
  latestIn: string;
  /** Partitioned tables: the newest version with valid_from <= ? in any of `partition IN ?`. */
  floorIn: string;
}

/** Builds the versioned-table statements; the row locator is `partition = ? AND key = ?` or `key = ?`. */
export function versionedStatements(ref: TableRef): VersionedStatements {
  const t = qualified(ref);
  const partitioned = ref.scope === 'partitioned';
  const loc = partitioned ? 'partition = ? AND key = ?' : 'key = ?';
  const asc = partitioned ? 'ORDER BY key DESC, valid_from ASC' : 'ORDER BY valid_from ASC';
  const cols = partitioned ? '(partition, key, valid_from, value) VALUES (?, ?, ?, ?)' : '(key, valid_from, value) VALUES (?, ?, ?)';
  return {
    insert: `INSERT INTO ${t} ${cols}`,
    latest: `SELECT valid_from, value FROM ${t} WHERE ${loc} LIMIT 1`,
    floor: `SELECT valid_from, value FROM ${t} WHERE ${loc} AND valid_from <= ? LIMIT ?`,
    after: `SELECT valid_from, value FROM ${t} WHERE ${loc} AND valid_from > ? ${asc} LIMIT 1`,
    allDesc: `SELECT valid_from, value FROM ${t} WHERE ${loc}`,
    upToDesc: `SELECT valid_from, value FROM ${t} WHERE ${loc} AND valid_from <= ?`,
    deleteBefore: `DELETE FROM ${t} WHERE ${loc} AND valid_from < ?`,
    deleteUpTo: `DELETE FROM ${t} WHERE ${loc} AND valid_from <= ?`,
    latestIn: `SELECT partition, valid_from, value FROM ${t} WHERE partition IN ? AND key = ? LIMIT 1`,
    floorIn: `SELECT partition, valid_from, value FROM ${t} WHERE partition IN ? AND key = ? AND valid_from <= ? LIMIT 1`,
  };
}
