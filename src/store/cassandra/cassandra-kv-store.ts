import { InvalidArgumentError, StoreError } from '../../errors';
import { KeyValue, KeyValueStore, Serde } from '../types';
import { deserializeWith, serializeWith } from '../validation';
import { KvTableReader } from './kv-table-reader';
import { kvPartitionColumns, qualified } from './layout';

/** Everything a CassandraKeyValueStore needs once its table exists (built by openCassandraKeyValueStore). */
export interface CassandraKvStoreParts<K, V> {
  reader: KvTableReader<K, V>;
  valueSerde: Serde<V>;
  /** Source partition (partitioned scope). */
  partition?: number;
  /** Whether approximateNumEntries may run COUNT(*). */
  allowCount: boolean;
  /** Statements per unlogged batch in putAll (default 100). */
  batchSize?: number;
}

/** Latest-value key-value store on a Cassandra table: get = 1 read, put = 1 write, putIfAbsent = 1 LWT. */
export class CassandraKeyValueStore<K, V> implements KeyValueStore<K, V> {
  private readonly reader: KvTableReader<K, V>;
  private readonly insertCql: string;
  private readonly insertIfAbsentCql: string;
  private readonly deleteCql: string;
  private closed = false;

  constructor(private readonly parts: CassandraKvStoreParts<K, V>) {
    this.reader = parts.reader;
    const t = qualified(parts.reader.ref);
    const pk = kvPartitionColumns(parts.reader.ref);
    this.insertCql = `INSERT INTO ${t} (${pk.join(', ')}, key, value) VALUES (${pk.map(() => '?, ').join('')}?, ?)`;
    this.insertIfAbsentCql = `${this.insertCql} IF NOT EXISTS`;
    this.deleteCql = `DELETE FROM ${t} WHERE ${pk.map((c) => `${c} = ? AND `).join('')}key = ?`;
  }

  /** Value of key, or null: one read. */
  async get(key: K): Promise<V | null> {
    this.ensureOpen();
    return this.reader.get(key);
  }

  /** Sets (or with null, deletes) the value of key: one write. */
  async put(key: K, value: V | null): Promise<void> {
    const k = this.reader.encodeKey(key);
    const v = value === null ? null : serializeWith(this.parts.valueSerde, value, 'value');
    this.ensureOpen();
    const s = this.statement(k, v);
    await this.reader.exec.write(s.query, s.params, 'kv put');
  }

  /** Lightweight transaction INSERT … IF NOT EXISTS; returns the existing value, or null when inserted. */
  async putIfAbsent(key: K, value: V): Promise<V | null> {
    const k = this.reader.encodeKey(key);
    if (value === null || value === undefined) throw new InvalidArgumentError('putIfAbsent value must not be null');
    const v = serializeWith(this.parts.valueSerde, value, 'value');
    this.ensureOpen();
    const rs = await this.reader.exec.write(this.insertIfAbsentCql, [...this.pk(k), k, v], 'kv putIfAbsent', { isIdempotent: false });
    const row = rs.first();
    if (row === null || row['[applied]'] === true) return null;
    return deserializeWith(this.parts.valueSerde, row.value as Buffer, 'value');
  }

  /** Writes every entry (validated first) in unlogged batches grouped by Cassandra partition. */
  async putAll(entries: KeyValue<K, V | null>[]): Promise<void> {
    const statements = entries.map((e) => {
      const k = this.reader.encodeKey(e.key);
      return this.statement(k, e.value === null ? null : serializeWith(this.parts.valueSerde, e.value, 'value'));
    });
    this.ensureOpen();
    const groups = new Map<string, { query: string; params: unknown[] }[]>();
    for (const s of statements) {
      const g = groups.get(s.group) ?? [];
      g.push(s);
      groups.set(s.group, g);
    }
    const size = this.parts.batchSize ?? 100;
    const batches: { query: string; params: unknown[] }[][] = [];
    for (const g of groups.values()) for (let i = 0; i < g.length; i += size) batches.push(g.slice(i, i + size));
    await Promise.all(batches.map((b) => this.reader.exec.batch(b, 'kv putAll')));
  }

  /** Deletes key and returns its previous value (one read + one write). */
  async delete(key: K): Promise<V | null> {
    const k = this.reader.encodeKey(key);
    this.ensureOpen();
    const old = await this.reader.getBytes(k);
    if (old === null) return null;
    await this.reader.exec.write(this.deleteCql, [...this.pk(k), k], 'kv delete');
    return deserializeWith(this.parts.valueSerde, old, 'value');
  }

  /** Keys in [from, to] in encoded-byte order (paged; merged across buckets for global stores). */
  range(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    this.ensureOpen();
    return this.reader.range(from, to);
  }

  /** Keys in [from, to] in descending order. */
  reverseRange(from?: K, to?: K): AsyncIterable<KeyValue<K, V>> {
    this.ensureOpen();
    return this.reader.reverseRange(from, to);
  }

  /** Every entry in encoded-byte order. */
  all(): AsyncIterable<KeyValue<K, V>> {
    this.ensureOpen();
    return this.reader.all();
  }

  /** Every entry in descending order. */
  reverseAll(): AsyncIterable<KeyValue<K, V>> {
    this.ensureOpen();
    return this.reader.reverseAll();
  }

  /** Entries whose encoded key starts with the encoded prefix. */
  prefixScan<P>(prefix: P, prefixSerde: Serde<P>): AsyncIterable<KeyValue<K, V>> {
    this.ensureOpen();
    return this.reader.prefixScan(prefix, prefixSerde);
  }

  /** Exact COUNT(*) of this store's rows; only when opened with allowCount: true. */
  async approximateNumEntries(): Promise<number> {
    this.ensureOpen();
    if (!this.parts.allowCount) {
      throw new StoreError('approximateNumEntries needs allowCount: true (it runs SELECT COUNT(*))', {
        code: 'COUNT_NOT_ENABLED',
        retriable: false,
      });
    }
    return this.reader.count();
  }

  /** Refuses further use (the shared client stays open). */
  async close(): Promise<void> {
    this.closed = true;
  }

  /** Values of the partition key columns of a key's row. */
  private pk(k: Buffer): number[] {
    return this.reader.partitionKeyOf(k, this.parts.partition);
  }

  /** The write of one entry and its Cassandra partition (the putAll batch group). */
  private statement(k: Buffer, v: Buffer | null): { query: string; params: unknown[]; group: string } {
    const pk = this.pk(k);
    const group = pk.join(':');
    return v === null ? { query: this.deleteCql, params: [...pk, k], group } : { query: this.insertCql, params: [...pk, k, v], group };
  }

  private ensureOpen(): void {
    if (this.closed) throw new StoreError(`key-value store ${this.reader.ref.table} is closed`, { code: 'STORE_CLOSED', retriable: false });
  }
}
