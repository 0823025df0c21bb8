import { RawVersion, historyRecords, VersionedTableReader } from '../store/cassandra/versioned-table-reader';
import { deserializeWith, historyBounds } from '../store/validation';
import { LookupContext, ResolvedStore } from './lookup-context';
import { LookupHistoryOptions, LookupRecord } from './types';

type Located = RawVersion & { partition?: number };

/**
 * KIP-889 reads on the versioned table of one generation. A point or as-of get is one Cassandra read (catalog entry,
 * stream time and partition list come from caches); partitioned tables without a known partition are read with one
 * `partition IN ?` query, since a key lives in exactly one source partition.
 */
export class VersionedReads {
  private readonly readers = new Map<string, VersionedTableReader>();

  constructor(private readonly ctx: LookupContext) {}

  /** Latest record (asOf undefined) or the record valid as of asOf, honouring the history-retention horizon. */
  async get(rs: ResolvedStore, key: Buffer, asOf: number | undefined, partition?: number): Promise<LookupRecord<unknown> | null> {
    // KIP-889: below the horizon only the latest version may answer, and only if it was already valid at asOf.
    const useLatest = asOf === undefined || asOf < (await this.horizon(rs));
    const row = await this.locate(rs, key, useLatest ? undefined : asOf, partition);
    if (row === null || row.value === null) return null;
    if (asOf !== undefined && row.validFrom > asOf) return null;
    return { value: deserializeWith(rs.valueSerde, row.value, 'value'), timestamp: row.validFrom };
  }

  /** KIP-968 history of a key in [fromTime, toTime], excluding tombstones and versions expired at the horizon. */
  async history(rs: ResolvedStore, key: Buffer, options: LookupHistoryOptions, partition?: number): Promise<LookupRecord<unknown>[]> {
    const { fromTime, toTime, order } = historyBounds(options);
    let p = partition;
    if (rs.entry.scope === 'partitioned' && p === undefined) {
      const latest = await this.locate(rs, key, undefined, undefined);
      if (latest === null) return [];
      p = latest.partition;
    }
    const entries = await this.reader(rs).history({ key, partition: p }, fromTime, toTime, await this.horizon(rs));
    return historyRecords(entries, rs.valueSerde, order);
  }

  /** The retention horizon of the table: its writers' max stream time minus the history retention. */
  private async horizon(rs: ResolvedStore): Promise<number> {
    return (await this.ctx.streamTime(rs.table)) - rs.entry.historyRetentionMs;
  }

  /** The newest version (t undefined) or the newest with valid_from <= t: always exactly one read (none if the table is empty). */
  private async locate(rs: ResolvedStore, key: Buffer, t: number | undefined, partition: number | undefined): Promise<Located | null> {
    const reader = this.reader(rs);
    if (rs.entry.scope === 'global' || partition !== undefined) {
      const loc = { key, partition };
      const row = t === undefined ? await reader.latest(loc) : await reader.asOf(loc, t);
      return row === null ? null : { ...row, partition };
    }
    const parts = await this.ctx.partitions(rs.table);
    if (parts.length === 0) return null;
    return reader.newestIn(parts, key, t);
  }

  private reader(rs: ResolvedStore): VersionedTableReader {
    let r = this.readers.get(rs.table);
    if (!r) {
      r = new VersionedTableReader(this.ctx.exec, { keyspace: this.ctx.keyspace, table: rs.table, scope: rs.entry.scope });
      if (this.readers.size > 256) this.readers.clear();
      this.readers.set(rs.table, r);
    }
    return r;
  }
}
