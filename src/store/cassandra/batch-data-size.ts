/**
 * Cassandra's own size of the rows of a batch. `BatchStatement` sums the `dataSize()` of each partition update and, for a
 * batch spanning several partitions, logs a warning past `batch_size_warn_threshold` (5 KiB by default) and fails it
 * past `batch_size_fail_threshold`. Measured on Cassandra 5.0.6 from those warnings (UNLOGGED batches of 20–64 rows
 * over 1, 2 or 64 partitions, 1–4 regular cells, null cells, blob and text values): a partition costs 29 bytes, a row
 * 21 plus its clustering values, and a cell 20 plus its value (a null cell 20); partition key bytes are not counted.
 * Cassandra 4 counts 4 bytes less per cell. Counting every row as a partition of its own gives an upper bound.
 */

/** Cassandra's default `batch_size_warn_threshold` (5 KiB): the worker's default bound on a batch's size. */
export const CASSANDRA_BATCH_WARN_BYTES = 5 * 1024;

/** Bytes of a partition update and its one row, before clustering values and cells. */
export const ROW_DATA_BYTES = 29 + 21;
/** Bytes of one cell before its value. */
export const CELL_DATA_BYTES = 20;

/**
 * Cassandra's size of a version row (its own partition): valid_from, the key when it clusters, the writer (a clustering
 * value, or a cell of its own in tables created before it clustered) and the value cell.
 */
export function versionRowDataBytes(
  clusteringKey: Buffer | undefined,
  value: Buffer | null,
  writer: Buffer,
  writerIsCell: boolean,
): number {
  const clustering = 8 + (clusteringKey === undefined ? 0 : clusteringKey.length) + writer.length;
  return ROW_DATA_BYTES + clustering + (writerIsCell ? 2 : 1) * CELL_DATA_BYTES + (value === null ? 0 : value.length);
}

/** Cassandra's size of extra cells bound to a row (typed columns): an upper bound of each value's serialised bytes. */
export function cellsDataBytes(cells: readonly unknown[]): number {
  let bytes = 0;
  for (const c of cells) bytes += CELL_DATA_BYTES + cellValueBytes(c);
  return bytes;
}

/** Serialised bytes of one bind value, at most (null 0, text its UTF-8 length, blob its length, fixed-size types ≤ 16). */
function cellValueBytes(v: unknown): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
  if (Buffer.isBuffer(v)) return v.length;
  if (typeof v === 'number' || typeof v === 'boolean') return 8;
  // Long, Date, LocalDate, Uuid, InetAddress: ≤ 16 bytes; varint and decimal grow with their digits.
  return Math.max(16, String(v).length);
}
