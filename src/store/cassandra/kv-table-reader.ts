import { Client } from 'cassandra-driver';
import { InvalidArgumentError } from '../../errors';
import { ByteRange, isEmptyRange, prefixRange } from '../key-range';
import { KeyValue, Serde, StoreScope } from '../types';
import { deserializeWith, requireKey, serializeWith } from '../validation';
import { CqlExecutor, ExecutionSettings, toNumber } from './cql-executor';
import { tableNameForStore, validateKeyspaceName, validateTableName } from './identifiers';
import { kvPartitionColumn, qualified, TableRef } from './layout';
import { mergeSorted, pagedRows } from './paging';

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
}

/** Read side of a key-value table: point reads and ordered scans merged across partitions/buckets. */
export class KvTableReader<K, V> {
  private readonly pc: string;
  private readonly t: string;
  private readonly fetchSize: number;
  private readonly buckets: number;
  private partitions?: Promise<number[]>;

  constructor(
    readonly exec: CqlExecutor,
    readonly ref: TableRef,
    private readonly settings: KvReaderSettings<K, V>,
  ) {
    this.pc = kvPartitionColumn(ref.scope);
    this.t = qualified(ref);
    this.fetchSize = settings.fetchSize ?? 500;
    this.buckets = settings.buckets ?? DEFAULT_KV_BUCKETS;
    if (settings.partitions !== undefined) this.partitions = Promise.resolve([...settings.partitions]);
  }

  /** Serialises a key (typed errors for null or unserialisable keys). */
  encodeKey(key: K): Buffer {
    requireKey(key);
    return serializeWith(this.settings.keySerde, key, 'key');
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
  async getBytes(key: Buffer): Promise<Buffer | null> {
    let rs;
    if (this.ref.scope === 'global') {
      rs = await this.exec.read(`SELECT value FROM ${this.t} WHERE bucket = ? AND key = ?`, [bucketOf(key, this.buckets), key], 'kv get');
    } else {
      const parts = await this.partitionValues();
      if (parts.length === 0) return null;
      rs =
        parts.length === 1
          ? await this.exec.read(`SELECT value FROM ${this.t} WHERE partition = ? AND key = ?`, [parts[0], key], 'kv get')
          : await this.exec.read(`SELECT value FROM ${this.t} WHERE partition IN ? AND key = ?`, [parts, key], 'kv get');
    }
    const row = rs.first();
    return row ? (row.value as Buffer) : null;
  }

  /** Keys in [from, to] in encoded-byte order. */
  range(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    return this.decode(this.scanBytes(this.bounds(from, to), false));
  }

  /** Keys in [from, to] in descending order. */
  reverseRange(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    return this.decode(this.scanBytes(this.bounds(from, to), true));
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
    requireKey(prefix);
    return this.decode(this.scanBytes(prefixRange(serializeWith(prefixSerde, prefix, 'key')), false));
  }

  /** Raw ordered scan over every partition/bucket read by this reader (lazy k-way merge of paged streams). */
  async *scanBytes(range: ByteRange, reverse: boolean): AsyncGenerator<{ key: Buffer; value: Buffer }> {
    if (isEmptyRange(range)) return;
    const conds: string[] = [`${this.pc} = ?`];
    const extra: unknown[] = [];
    if (range.from !== undefined) {
      conds.push('key >= ?');
      extra.push(range.from);
    }
    if (range.to !== undefined) {
      conds.push(range.toExclusive ? 'key < ?' : 'key <= ?');
      extra.push(range.to);
    }
    const q = `SELECT key, value FROM ${this.t} WHERE ${conds.join(' AND ')}${reverse ? ' ORDER BY key DESC' : ''}`;
    const parts = await this.partitionValues();
    const streams = parts.map((p) => this.rowsOf(q, [p, ...extra]));
    const cmp = reverse ? (a: { key: Buffer }, b: { key: Buffer }) => Buffer.compare(b.key, a.key) : (a: { key: Buffer }, b: { key: Buffer }) => Buffer.compare(a.key, b.key);
    yield* streams.length === 1 ? streams[0] : mergeSorted(streams, cmp);
  }

  /** Exact row count (a COUNT(*) per partition/bucket — expensive on large tables). */
  async count(): Promise<number> {
    const parts = await this.partitionValues();
    const counts = await Promise.all(
      parts.map(async (p) => {
        const rs = await this.exec.read(`SELECT COUNT(*) AS n FROM ${this.t} WHERE ${this.pc} = ?`, [p], 'kv count');
        return toNumber(rs.first()?.n ?? 0);
      }),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  private async *rowsOf(q: string, params: unknown[]): AsyncGenerator<{ key: Buffer; value: Buffer }> {
    for await (const row of pagedRows(this.exec, q, params, 'kv scan', this.fetchSize)) {
      yield { key: row.key as Buffer, value: row.value as Buffer };
    }
  }

  private partitionValues(): Promise<number[]> {
    if (this.ref.scope === 'global') return Promise.resolve(Array.from({ length: this.buckets }, (_, i) => i));
    if (this.partitions === undefined) {
      this.partitions = (async () => {
        const rs = await this.exec.read(`SELECT DISTINCT partition FROM ${this.t}`, [], 'kv list partitions', { fetchSize: 10_000 });
        return rs.rows.map((r) => Number(r.partition)).sort((a, b) => a - b);
      })();
      this.partitions.catch(() => (this.partitions = undefined));
    }
    return this.partitions;
  }

  private bounds(from?: K, to?: K): ByteRange {
    return {
      from: from === undefined || from === null ? undefined : this.encodeKey(from),
      to: to === undefined || to === null ? undefined : this.encodeKey(to),
    };
  }

  private async *decode(rows: AsyncIterable<{ key: Buffer; value: Buffer }>): AsyncGenerator<KeyValue<K, V>> {
    for await (const r of rows) {
      yield { key: deserializeWith(this.settings.keySerde, r.key, 'key'), value: deserializeWith(this.settings.valueSerde, r.value, 'value') };
    }
  }
}

/** Options of openKvTableReader. */
export interface KvTableReaderOptions<K, V> extends ExecutionSettings, KvReaderSettings<K, V> {
  client: Client;
  keyspace: string;
  scope: StoreScope;
  storeName?: string;
  tableName?: string;
}

/** Validates names and builds a reader over an existing key-value table across all its partitions (no CQL sent). */
export function openKvTableReader<K, V>(options: KvTableReaderOptions<K, V>): KvTableReader<K, V> {
  const keyspace = validateKeyspaceName(options.keyspace);
  const table = options.tableName !== undefined ? validateTableName(options.tableName) : tableNameForStore(options.storeName);
  if (options.scope !== 'partitioned' && options.scope !== 'global') throw new InvalidArgumentError(`invalid scope ${String(options.scope)}`);
  const exec = new CqlExecutor(options.client, options, { keyspace, table });
  return new KvTableReader(exec, { keyspace, table, scope: options.scope }, options);
}
