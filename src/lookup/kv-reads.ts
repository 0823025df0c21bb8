import { ByteRange } from '../store/key-range';
import { DEFAULT_KV_BUCKETS, KvTableReader } from '../store/cassandra/kv-table-reader';
import { deserializeWith } from '../store/validation';
import { LookupContext, ResolvedStore } from './lookup-context';
import { LookupRecord } from './types';

/** A decoded kv entry plus its encoded key (used as a cursor). */
export interface RawKeyed {
  key: unknown;
  value: unknown;
  encodedKey: Buffer;
}

/** Reads on the key-value table of one generation: one-read gets and lazily paged, merged ordered scans. */
export class KvReads {
  constructor(private readonly ctx: LookupContext) {}

  /** Value of an encoded key: one read (an IN query over the partitions of a partitioned table). */
  async get(rs: ResolvedStore, key: Buffer, partition?: number): Promise<LookupRecord<unknown> | null> {
    const reader = await this.reader(rs, partition);
    if (reader === null) return null;
    const bytes = await reader.getBytes(key);
    return bytes === null ? null : { value: deserializeWith(rs.valueSerde, bytes, 'value') };
  }

  /** Entries in the byte range, ascending or descending, at most limit (driver paging; never the whole table in memory). */
  async *scan(rs: ResolvedStore, range: ByteRange, reverse: boolean, limit?: number, partition?: number): AsyncGenerator<RawKeyed> {
    if (limit !== undefined && limit <= 0) return;
    const reader = await this.reader(rs, partition, limit);
    if (reader === null) return;
    let n = 0;
    for await (const r of reader.scanBytes(range, reverse)) {
      yield { key: deserializeWith(rs.keySerde, r.key, 'key'), value: deserializeWith(rs.valueSerde, r.value, 'value'), encodedKey: r.key };
      if (limit !== undefined && ++n >= limit) return;
    }
  }

  /** A reader over the table's partitions (or buckets), or null when a partitioned table has no rows yet. */
  private async reader(rs: ResolvedStore, partition?: number, limit?: number): Promise<KvTableReader<unknown, unknown> | null> {
    let partitions: number[] | undefined;
    if (rs.entry.scope === 'partitioned') {
      partitions = partition !== undefined ? [partition] : await this.ctx.partitions(rs.table);
      if (partitions.length === 0) return null;
    }
    const fetchSize = limit !== undefined ? Math.max(1, Math.min(this.ctx.fetchSize, limit)) : this.ctx.fetchSize;
    return new KvTableReader(this.ctx.exec, { keyspace: this.ctx.keyspace, table: rs.table, scope: rs.entry.scope }, {
      keySerde: rs.keySerde,
      valueSerde: rs.valueSerde,
      fetchSize,
      buckets: rs.entry.buckets ?? DEFAULT_KV_BUCKETS,
      partitions,
    });
  }
}
