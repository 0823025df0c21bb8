import { ByteRange, isEmptyRange, keyBounds, prefixRange } from '../key-range';
import { KeyValue, Serde } from '../types';
import { deserializeWith, encodeKeyWith } from '../validation';
import { CqlExecutor, toNumber } from './cql-executor';
import { bucketOf, DEFAULT_KV_BUCKETS } from './key-bucket';
import { kvPartitionColumns, qualified, TableRef } from './layout';
import { readerTable, TableReaderOptions } from './open-common';
import { listPartitions, mergeSorted, pagedRows } from './paging';

/** Settings of a KvTableReader. */
export interface KvReaderSettings<K, V> {
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
  /** Rows per page of scans (default 500). */
  fetchSize?: number;
  /** Global tables: number of buckets the table was written with (default 16; must never change). Partitioned tables take theirs from the TableRef. */
  buckets?: number;
  /** Partitioned tables: the partitions to read (default: discovered once with SELECT DISTINCT). */
  partitions?: number[];
  /** Partitioned tables: asked for the partitions of the table on every read (e.g. a TTL-cached discovery); used when `partitions` is not given. */
  partitionsProvider?: (table: string) => Promise<number[]>;
}

/** Per-call narrowing of a read: one source partition (partitioned tables) and the page size of scans. */
export interface KvReadScope {
  partition?: number;
  fetchSize?: number;
}

type Row = { key: Buffer; value: Buffer };

const ascending = (a: Row, b: Row) => Buffer.compare(a.key, b.key);
const descending = (a: Row, b: Row) => Buffer.compare(b.key, a.key);

/** Read side of a key-value table: point reads and ordered scans merged across partitions/buckets. */
export class KvTableReader<K, V> {
  private readonly fetchSize: number;
  /** Key-hash buckets of the table (global tables, bucketed partitioned tables); undefined: none. */
  private readonly buckets: number | undefined;
  private readonly bucketList: number[];
  private partitions?: Promise<number[]>;
  private readonly getCql: string;
  private readonly getInCql: string;
  private readonly countCql: string;
  private readonly scanCql = new Map<string, string>();

  constructor(
    readonly exec: CqlExecutor,
    readonly ref: TableRef,
    private readonly settings: KvReaderSettings<K, V>,
  ) {
    this.fetchSize = settings.fetchSize ?? 500;
    this.buckets = ref.scope === 'global' ? (settings.buckets ?? DEFAULT_KV_BUCKETS) : ref.buckets;
    this.bucketList = Array.from({ length: this.buckets ?? 0 }, (_, i) => i);
    if (settings.partitions !== undefined) this.partitions = Promise.resolve([...settings.partitions]);
    const t = qualified(ref);
    const pk = kvPartitionColumns(ref);
    const where = pk.map((c) => `${c} = ?`).join(' AND ');
    this.getCql = `SELECT value FROM ${t} WHERE ${where} AND key = ?`;
    this.getInCql = `SELECT value FROM ${t} WHERE partition IN ?${this.buckets === undefined ? '' : ' AND bucket = ?'} AND key = ?`;
    this.countCql = `SELECT COUNT(*) AS n FROM ${t} WHERE ${where}`;
  }

  /** Serialises a key (typed errors for null or unserialisable keys). */
  encodeKey(key: K): Buffer {
    return encodeKeyWith(this.settings.keySerde, key);
  }

  /** Values of the partition key columns of a key's row when written from a given source partition (see kvPartitionColumns). */
  partitionKeyOf(key: Buffer, partition?: number): number[] {
    if (this.ref.scope === 'global') return [bucketOf(key, this.buckets as number)];
    return this.buckets === undefined ? [partition as number] : [partition as number, bucketOf(key, this.buckets)];
  }

  /** Value of key, or null: one read. */
  async get(key: K): Promise<V | null> {
    const bytes = await this.getBytes(this.encodeKey(key));
    return bytes === null ? null : deserializeWith(this.settings.valueSerde, bytes, 'value');
  }

  /** Raw value of an encoded key, or null: one read (an IN query across partitions when several are read). */
  async getBytes(key: Buffer, partition?: number): Promise<Buffer | null> {
    let rs;
    if (this.ref.scope === 'global') {
      rs = await this.exec.read(this.getCql, [...this.partitionKeyOf(key), key], 'kv get');
    } else {
      const parts = await this.partitionValues(partition);
      if (parts.length === 0) return null;
      const bucket = this.buckets === undefined ? [] : [bucketOf(key, this.buckets)];
      rs =
        parts.length === 1
          ? await this.exec.read(this.getCql, [parts[0], ...bucket, key], 'kv get')
          : await this.exec.read(this.getInCql, [parts, ...bucket, key], 'kv get');
    }
    const row = rs.first();
    return row ? (row.value as Buffer) : null;
  }

  /** Keys in [from, to] in encoded-byte order. */
  range(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    return this.decode(
      this.scanBytes(
        keyBounds(from, to, (k) => this.encodeKey(k)),
        false,
      ),
    );
  }

  /** Keys in [from, to] in descending order. */
  reverseRange(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    return this.decode(
      this.scanBytes(
        keyBounds(from, to, (k) => this.encodeKey(k)),
        true,
      ),
    );
  }

  /** Every entry in encoded-byte order. */
  all(): AsyncIterable<KeyValue<K, V>> {
    return this.decode(this.scanBytes({}, false));
  }

  /** Every entry in descending order. */
  reverseAll(): AsyncIterable<KeyValue<K, V>> {
    return this.decode(this.scanBytes({}, true));
  }

  /** Entries whose encoded key starts with the encoded prefix. */
  prefixScan<P>(prefix: P, prefixSerde: Serde<P>): AsyncIterable<KeyValue<K, V>> {
    return this.decode(this.scanBytes(prefixRange(encodeKeyWith(prefixSerde, prefix)), false));
  }

  /**
   * Raw ordered scan over every Cassandra partition read by this reader (each bucket of a global table; each source
   * partition, times each of its buckets when bucketed): a lazy k-way merge of their paged, key-ordered streams.
   */
  async *scanBytes(range: ByteRange, reverse: boolean, scope: KvReadScope = {}): AsyncGenerator<Row> {
    if (isEmptyRange(range)) return;
    const extra: unknown[] = [];
    if (range.from !== undefined) extra.push(range.from);
    if (range.to !== undefined) extra.push(range.to);
    const q = this.scanStatement(range, reverse);
    const fetchSize = scope.fetchSize ?? this.fetchSize;
    const units = await this.cassandraPartitions(scope.partition);
    const streams = units.map((pk) => this.rowsOf(q, [...pk, ...extra], fetchSize));
    yield* streams.length === 1 ? streams[0] : mergeSorted(streams, reverse ? descending : ascending);
  }

  /** Exact row count (a COUNT(*) per Cassandra partition — expensive on large tables). */
  async count(): Promise<number> {
    const units = await this.cassandraPartitions();
    const counts = await Promise.all(
      units.map(async (pk) => {
        const rs = await this.exec.read(this.countCql, pk, 'kv count');
        return toNumber(rs.first()?.n ?? 0);
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  /** CQL of a scan with these bounds and order (each shape built once). */
  private scanStatement(range: ByteRange, reverse: boolean): string {
    const to = range.to === undefined ? '' : range.toExclusive ? '<' : '<=';
    const shape = `${range.from === undefined ? '' : '>='}|${to}|${reverse ? 'desc' : 'asc'}`;
    let q = this.scanCql.get(shape);
    if (q === undefined) {
      const conds = kvPartitionColumns(this.ref).map((c) => `${c} = ?`);
      if (range.from !== undefined) conds.push('key >= ?');
      if (to !== '') conds.push(`key ${to} ?`);
      q = `SELECT key, value FROM ${qualified(this.ref)} WHERE ${conds.join(' AND ')}${reverse ? ' ORDER BY key DESC' : ''}`;
      this.scanCql.set(shape, q);
    }
    return q;
  }

  private async *rowsOf(q: string, params: unknown[], fetchSize: number): AsyncGenerator<Row> {
    for await (const row of pagedRows(this.exec, q, params, 'kv scan', fetchSize)) {
      yield { key: row.key as Buffer, value: row.value as Buffer };
    }
  }

  /** Partition key values of every Cassandra partition to scan: `[bucket]`, `[partition]` or `[partition, bucket]`. */
  private async cassandraPartitions(partition?: number): Promise<number[][]> {
    if (this.ref.scope === 'global') return this.bucketList.map((b) => [b]);
    const parts = await this.partitionValues(partition);
    if (this.buckets === undefined) return parts.map((p) => [p]);
    return parts.flatMap((p) => this.bucketList.map((b) => [p, b]));
  }

  /** Source partitions of a partitioned table: the given one, the configured ones, the provider's, or the discovered ones. */
  private partitionValues(partition?: number): Promise<number[]> {
    if (partition !== undefined) return Promise.resolve([partition]);
    if (this.partitions !== undefined) return this.partitions;
    if (this.settings.partitionsProvider !== undefined) return this.settings.partitionsProvider(this.ref.table);
    const discovered = listPartitions(this.exec, qualified(this.ref), 'kv list partitions');
    this.partitions = discovered;
    discovered.catch(() => (this.partitions = undefined));
    return discovered;
  }

  private async *decode(rows: AsyncIterable<Row>): AsyncGenerator<KeyValue<K, V>> {
    for await (const r of rows) {
      yield {
        key: deserializeWith(this.settings.keySerde, r.key, 'key'),
        value: deserializeWith(this.settings.valueSerde, r.value, 'value'),
      };
    }
  }
}

/** Options of openKvTableReader. */
export type KvTableReaderOptions<K, V> = TableReaderOptions & KvReaderSettings<K, V>;

/** Validates names and builds a reader over an existing key-value table across all its partitions (no CQL sent). */
export function openKvTableReader<K, V>(options: KvTableReaderOptions<K, V>): KvTableReader<K, V> {
  const { exec, ref } = readerTable(options);
  return new KvTableReader(exec, ref, options);
}
