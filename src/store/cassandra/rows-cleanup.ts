import { VersionedTableReader } from './versioned-table-reader';

/** Bind values of a key's rows plus one valid_from bound. */
function boundParams(reader: VersionedTableReader, key: Buffer, partition: number | undefined, bound: unknown): unknown[] {
  return [...reader.rowKey(key, partition), bound];
}

/** The rows layout's blind clean-up: deletes every version of a key older than `anchor` (a durable version at or below the horizon). */
export async function deleteRowsBefore(
  reader: VersionedTableReader,
  key: Buffer,
  partition: number | undefined,
  anchor: number,
): Promise<void> {
  await reader.exec.write(
    reader.cql.deleteBefore,
    boundParams(reader, key, partition, reader.exec.long(anchor)),
    'delete expired versions',
  );
}

/**
 * The rows layout's clean-up at a persisted horizon (the one readers apply): one read of the version valid at that
 * horizon, then (only if something older exists, or it is a tombstone below the horizon) one range delete.
 */
export async function cleanRowsBelow(
  reader: VersionedTableReader,
  key: Buffer,
  partition: number | undefined,
  horizon: number,
): Promise<void> {
  if (!Number.isFinite(horizon) || horizon <= 0) return;
  const rows = await reader.floor({ key, partition }, horizon, 2);
  if (rows.length === 0) return;
  const atHorizon = rows[0];
  const bound = reader.exec.long(atHorizon.validFrom);
  // A tombstone exactly at the horizon is kept: a put at that very timestamp is still accepted and must not be shadowed.
  if (atHorizon.value === null && atHorizon.validFrom < horizon) {
    await reader.exec.write(reader.cql.deleteUpTo, boundParams(reader, key, partition, bound), 'delete expired versions');
  } else if (rows.length > 1) {
    await reader.exec.write(reader.cql.deleteBefore, boundParams(reader, key, partition, bound), 'delete expired versions');
  }
}
