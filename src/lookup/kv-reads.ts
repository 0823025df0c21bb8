import { ByteRange } from '../store/key-range';
import { KvTableReader } from '../store/cassandra';
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
  private readonly readers = new Map<string, KvTableReader<unknown, unknown>>();

  constructor(private readonly ctx: LookupContext) {}

  /** Value of an encoded key: one read (an IN query over the partitions of a partitioned table). */
  async get(rs: ResolvedStore, key: Buffer, partition?: number): Promise<LookupRecord<unknown> | null> {
    const bytes = await this.reader(rs).getBytes(key, partition);
    return bytes === null ? null : { value: deserializeWith(rs.valueSerde, bytes, 'value') };
  }

  /** Entries in the byte range, ascending or descending, at most limit (driver paging; never the whole table in memory). */
  async *scan(rs: ResolvedStore, range: ByteRange, reverse: boolean, limit?: number, partition?: number): AsyncGenerator<RawKeyed> {
    if (limit !== undefined && limit <= 0) return;
    const fetchSize = limit !== undefined ? Math.max(1, Math.min(this.ctx.fetchSize, limit)) : this.ctx.fetchSize;
    let n = 0;
    for await (const r of this.reader(rs).scanBytes(range, reverse, { partition, fetchSize })) {
      yield { key: deserializeWith(rs.keySerde, r.key, 'key'), value: deserializeWith(rs.valueSerde, r.value, 'value'), encodedKey: r.key };
      if (limit !== undefined && ++n >= limit) return;
    }
  }

  /** The reader of a generation's table (one per table; partitions come from the context's cached discovery). */
  private reader(rs: ResolvedStore): KvTableReader<unknown, unknown> {
    let r = this.readers.get(rs.table);
    if (!r) {
      r = new KvTableReader(
        this.ctx.exec,
        { keyspace: this.ctx.keyspace, table: rs.table, scope: rs.entry.scope, buckets: rs.buckets },
        {
          keySerde: rs.keySerde,
          valueSerde: rs.valueSerde,
          fetchSize: this.ctx.fetchSize,
          buckets: rs.buckets,
          partitionsProvider: () => this.ctx.partitions(rs),
        },
      );
      if (this.readers.size > 256) this.readers.clear();
      this.readers.set(rs.table, r);
    }
    return r;
  }
}
