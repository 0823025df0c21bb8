import { ByteRange, isEmptyRange, keyBounds, prefixRange } from '../key-range';
import { KeyValue, Serde } from '../types';
import { deserializeWith, encodeKeyWith } from '../validation';
import { CqlExecutor, toNumber } from './cql-executor';
import { kvPartitionColumn, qualified, TableRef } from './layout';
import { readerTable, TableReaderOptions } from './open-common';
import { listPartitions, mergeSorted, pagedRows } from './paging';

/** Default number of buckets of a global key-value table. */
export const DEFAULT_KV_BUCKETS = 16;

/** Stable bucket of a key in a global key-value table: FNV-1a 32 of the key bytes modulo buckets. */
export function bucketOf(key: Buffer, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key[i];
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % buckets;
}

/** Settings of a KvTableReader. */
export interface KvReaderSettings<K, V> {
  keySerde: Serde<K>;
  valueSerde: Serde<V>;
  /** Rows per page of scans (default 500). */
  fetchSize?: number;
  /** Global tables: number of buckets the table was written with (default 16; must never change). */
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
  private readonly buckets: number;
  private readonly bucketList?: Promise<number[]>;
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
    this.buckets = settings.buckets ?? DEFAULT_KV_BUCKETS;
    if (ref.scope === 'global') this.bucketList = Promise.resolve(Array.from({ length: this.buckets }, (_, i) => i));
    if (settings.partitions !== undefined) this.partitions = Promise.resolve([...settings.partitions]);
    const t = qualified(ref);
    const pc = kvPartitionColumn(ref.scope);
    this.getCql = `SELECT value FROM ${t} WHERE ${pc} = ? AND key = ?`;
    this.getInCql = `SELECT value FROM ${t} WHERE partition IN ? AND key = ?`;
    this.countCql = `SELECT COUNT(*) AS n FROM ${t} WHERE ${pc} = ?`;
  }

  /** Serialises a key (typed errors for null or unserialisable keys). */
  encodeKey(key: K): Buffer {
    return encodeKeyWith(this.settings.keySerde, key);
  }

  /** Value of the partition column for a key when writing to this table from a given source partition. */
  partitionValueFor(key: Buffer, partition?: number): number {
    return this.ref.scope === 'global' ? bucketOf(key, this.buckets) : (partition as number);
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
      rs = await this.exec.read(this.getCql, [bucketOf(key, this.buckets), key], 'kv get');
    } else {
      const parts = await this.partitionValues(partition);
      if (parts.length === 0) return null;
      rs =
        parts.length === 1
          ? await this.exec.read(this.getCql, [parts[0], key], 'kv get')
          : await this.exec.read(this.getInCql, [parts, key], 'kv get');
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

  /** Raw ordered scan over every partition/bucket read by this reader (lazy k-way merge of paged streams). */
  async *scanBytes(range: ByteRange, reverse: boolean, scope: KvReadScope = {}): AsyncGenerator<Row> {
    if (isEmptyRange(range)) return;
    const extra: unknown[] = [];
    if (range.from !== undefined) extra.push(range.from);
    if (range.to !== undefined) extra.push(range.to);
    const q = this.scanStatement(range, reverse);
    const fetchSize = scope.fetchSize ?? this.fetchSize;
    const parts = await this.partitionValues(scope.partition);
    const streams = parts.map((p) => this.rowsOf(q, [p, ...extra], fetchSize));
    yield* streams.length === 1 ? streams[0] : mergeSorted(streams, reverse ? descending : ascending);
  }

  /** Exact row count (a COUNT(*) per partition/bucket — expensive on large tables). */
  async count(): Promise<number> {
    const parts = await this.partitionValues();
    const counts = await Promise.all(
      parts.map(async (p) => {
        const rs = await this.exec.read(this.countCql, [p], 'kv count');
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
      const conds = [`${kvPartitionColumn(this.ref.scope)} = ?`];
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

  /** Buckets of a global table; else the given partition, the configured ones, the provider's, or the discovered ones. */
  private partitionValues(partition?: number): Promise<number[]> {
    if (this.bucketList !== undefined) return this.bucketList;
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
