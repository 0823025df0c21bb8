import { RowListener } from '../types';
import { cellsDataBytes, versionRowDataBytes } from './batch-data-size';
import { PREPARED_IN_PLACE } from './fast-prepared-batch';
import { int32RoutingKey, partitionBucketRoutingKey } from './key-bucket';
import { keyHash, versionRowId } from './key-hash';
import { TypedColumns } from './typed-columns';
import { VersionedTableReader } from './versioned-table-reader';
import { CoalescedWrite } from './write-batcher';

/**
 * The rows layout's write of one version for one writer: a row `(key, valid_from, writer) → value`, coalesced into a
 * batch when the executor has a batcher, with the bind values built directly (the partition was validated once). Its
 * routing key is the Cassandra partition key (with the key's bucket in a bucketed table, so token-aware routing and the
 * batcher's replica groups see the row's real token). With typed columns the same INSERT also sets them.
 */
export class RowsVersionWriter<K, V> {
  /**
   * Routing keys of the rows of a partitioned table, by bucket (one entry, bucket 0, when unbucketed): the serialised
   * Cassandra partition key `(partition)` or `(partition, bucket)`, built once. Empty for global tables (the key routes).
   */
  private readonly routingKeys: Buffer[] = [];
  /** keyHash of each routing key, by bucket (the batcher's partition grouping). */
  private readonly routingHashes: number[] = [];
  /** The writer cell of every row, encoded once (the driver sends Buffer bind values as they are). */
  private readonly writerCell: Buffer;
  /** Typed rows are resolved and issued in call order (a later put of the same key and timestamp replaces an earlier one): its tail. */
  private typedIssued: Promise<void> = Promise.resolve();

  constructor(
    private readonly reader: VersionedTableReader,
    /** The source partition of every row (validated; undefined for global tables). */
    private readonly partition: number | undefined,
    writerId: string,
    /** True when the table keeps `writer` as a regular cell (tables created before it became a clustering column). */
    private readonly writerIsCell: boolean,
    private readonly typed?: TypedColumns,
  ) {
    if (partition !== undefined) {
      const buckets = reader.ref.buckets;
      if (buckets === undefined) this.routingKeys.push(int32RoutingKey(partition));
      else for (let b = 0; b < buckets; b++) this.routingKeys.push(partitionBucketRoutingKey(partition, b));
      for (const k of this.routingKeys) this.routingHashes.push(keyHash(k));
    }
    this.writerCell = Buffer.from(writerId, 'utf8');
  }

  /**
   * Sends one version; the listener hears when it is durable. With typed columns they are set from the unserialised key
   * and value (`typedKey`, `typedValue`; null for tombstones). `hash` is keyHash(key).
   */
  send(
    key: Buffer,
    timestamp: number,
    value: Buffer | null,
    typedValue: V | null,
    typedKey: K | undefined,
    listener: RowListener,
    hash: number,
  ): void {
    const writer = this.writerCell;
    const bucket = this.reader.bucketFor(key, hash);
    const row: CoalescedWrite = {
      query: this.reader.cql.insert,
      params: this.reader.insertValues(key, this.partition, bucket, this.reader.exec.rowInt64(timestamp), value, writer),
      routingKey: this.partition === undefined ? key : this.routingKeys[bucket ?? 0],
      // A global table's routing key is the key itself, already hashed.
      partitionHash: this.partition === undefined ? hash : this.routingHashes[bucket ?? 0],
      rowId: versionRowId(hash, timestamp),
      // Cassandra's own measure, which its batch size warning uses (a partitioned table clusters by the key).
      bytes: versionRowDataBytes(this.partition === undefined ? undefined : key, value, writer, this.writerIsCell),
      listener: undefined,
      [PREPARED_IN_PLACE]: true,
      queryId: undefined,
      meta: undefined,
    };
    const typed = this.typed;
    if (typed === undefined) {
      this.reader.exec.issueRow(row, 'write version', listener);
      return;
    }
    // A registry or schema outage while the row's columns are resolved is retried like the write itself, never the record's fault.
    const abandoned = listener.abandoned ? () => listener.abandoned!() : undefined;
    // Rows are resolved and issued one after another, in call order: a later put of the same key and timestamp is
    // neither overtaken by one waiting for a schema re-read (which would then replace it) nor built with the columns of
    // the schema before that re-read (which would leave the earlier put's new columns in place).
    this.typedIssued = this.typedIssued.then(() =>
      this.reader.exec
        .retried(() => typed.row(typedKey, value === null ? null : typedValue), abandoned)
        .then(
          (t) => {
            try {
              row.query = t.cql;
              row.params.push(...t.cells);
              row.bytes += cellsDataBytes(t.cells);
              this.reader.exec.issueRow(row, 'write version', listener);
            } catch (e) {
              listener.rowFailed(e); // the order's tail never rejects, or every later row would wait forever
            }
          },
          (e: unknown) => listener.rowFailed(e),
        ),
    );
  }
}
