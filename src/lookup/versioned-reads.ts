import {
  asOfAnswer,
  EdgeTableReader,
  historyRecords,
  RawVersion,
  RowLocator,
  VersionedTableReader,
  VersionReads,
} from '../store/cassandra';
import { deserializeWith, historyBounds } from '../store/validation';
import { LookupContext, ResolvedStore } from './lookup-context';
import { WriterStreamTimes } from './writer-stream-times';
import { LookupHistoryOptions, LookupRecord, WriterHorizon } from './types';

/**
 * KIP-889/KIP-968 reads on the versioned table of one generation. A latest get is one Cassandra read; an as-of get is
 * two reads issued in parallel (the version as of asOf and the next one, for validTo), an as-of value one read; on an
 * edge-layout table an as-of get is one read too. The
 * catalog entry, the writers' stream times and the partition list come from caches (a stream-time refresh runs
 * alongside the reads). Partitioned
 * tables without a known partition are read with `partition IN ?`, since a key lives in exactly one source partition.
 * Retention applies per version with the stream time of the writer (source partition) that wrote it.
 */
export class VersionedReads {
  private readonly readers = new Map<string, VersionReads>();

  constructor(private readonly ctx: LookupContext) {}

  /** Latest record (asOf undefined) or the record valid as of asOf with its validTo, honouring the key's retention horizon. */
  get(rs: ResolvedStore, key: Buffer, asOf: number | undefined, partition?: number): Promise<LookupRecord<unknown> | null> {
    const loc = this.knownLocator(rs, key, partition);
    if (loc === undefined) return this.partitionsLocator(rs, key).then((l) => (l === null ? null : this.getAt(rs, l, asOf)));
    return this.getAt(rs, loc, asOf);
  }

  private getAt(rs: ResolvedStore, loc: RowLocator, asOf: number | undefined): Promise<LookupRecord<unknown> | null> {
    const reader = this.reader(rs);
    if (asOf === undefined) return reader.latest(loc).then((v) => this.toRecord(rs, v));
    return this.withWriters(reader.asOfWithNext(loc, asOf), rs.table, (pair, writers) => {
      const answer = asOfAnswer(pair, asOf, writers.of(pair.floor) - rs.entry.historyRetentionMs);
      return answer === null ? null : this.toRecord(rs, answer.version, answer.validTo);
    });
  }

  /**
   * The record valid as of asOf without its validTo (a stream-table join needs only the value): one read, the version
   * as of asOf. Only when asOf is below the horizon of that version's writer, where just the newest version may answer,
   * does a second read (the next version) follow. Same value as get(rs, key, asOf).
   */
  valueAsOf(rs: ResolvedStore, key: Buffer, asOf: number, partition?: number): Promise<LookupRecord<unknown> | null> {
    const loc = this.knownLocator(rs, key, partition);
    if (loc === undefined) return this.partitionsLocator(rs, key).then((l) => (l === null ? null : this.valueAt(rs, l, asOf)));
    return this.valueAt(rs, loc, asOf);
  }

  private valueAt(rs: ResolvedStore, loc: RowLocator, asOf: number): Promise<LookupRecord<unknown> | null> {
    const reader = this.reader(rs);
    return this.withWriters(reader.asOf(loc, asOf), rs.table, (floor, writers) => {
      const horizon = writers.of(floor) - rs.entry.historyRetentionMs;
      // Above the horizon the next version would only give validTo; below it, it tells whether the floor is the newest.
      if (floor !== null && floor.value !== null && asOf < horizon) {
        return reader.nextValidFrom(loc, asOf).then((next) => {
          const answer = asOfAnswer({ floor, next: next === null ? null : { validFrom: next } }, asOf, horizon);
          return answer === null ? null : this.toRecord(rs, answer.version);
        });
      }
      const answer = asOfAnswer({ floor, next: null }, asOf, horizon);
      return answer === null ? null : this.toRecord(rs, answer.version);
    });
  }

  /** KIP-968 history of a key in [fromTime, toTime] with the same horizon rule as get (see VersionedTableReader.history). */
  async history(rs: ResolvedStore, key: Buffer, options: LookupHistoryOptions, partition?: number): Promise<LookupRecord<unknown>[]> {
    const { fromTime, toTime, order } = historyBounds(options);
    const loc = await this.locator(rs, key, partition);
    if (loc === null) return [];
    const writers = this.ctx.streamTimes(rs.table);
    writers.catch(() => undefined); // awaited below; a failure surfaces there
    const horizonOf = async (v: RawVersion | null): Promise<number> => (await writers).of(v) - rs.entry.historyRetentionMs;
    const entries = await this.reader(rs).history(loc, fromTime, toTime, horizonOf, order === 'desc' ? options.maxVersions : undefined);
    return historyRecords(entries, rs.valueSerde, order);
  }

  /** Every writer of the table with its persisted stream time and horizon (cached ≤ generationCacheMs), by writer name. */
  async horizons(rs: ResolvedStore): Promise<WriterHorizon[]> {
    const writers = await this.ctx.streamTimes(rs.table);
    return [...writers.byWriter.entries()]
      .map(([writer, streamTime]) => ({ writer, streamTime, horizon: streamTime - rs.entry.historyRetentionMs }))
      .sort((a, b) => a.writer.localeCompare(b.writer));
  }

  /** The horizon that applies to a key (that of the writer of its newest version), or null when the key has no versions. */
  async keyHorizon(rs: ResolvedStore, key: Buffer, partition?: number): Promise<WriterHorizon | null> {
    const loc = await this.locator(rs, key, partition);
    if (loc === null) return null;
    return this.withWriters(this.reader(rs).latest(loc), rs.table, (latest, writers) => {
      if (latest === null) return null;
      const streamTime = writers.of(latest);
      return { writer: latest.writer ?? '(any)', streamTime, horizon: streamTime - rs.entry.historyRetentionMs };
    });
  }

  /**
   * A read and the writers' stream times of its table, combined by `then`: the cached stream times when fresh (no wait
   * beyond the read's own), else refreshed alongside the read.
   */
  private withWriters<T, R>(read: Promise<T>, table: string, then: (r: T, writers: WriterStreamTimes) => R | Promise<R>): Promise<R> {
    const cached = this.ctx.streamTimesNow(table);
    if (cached !== undefined) return read.then((r) => then(r, cached));
    return Promise.all([read, this.ctx.streamTimes(table)]).then(([r, writers]) => then(r, writers));
  }

  /** Where a key's rows are when that needs no lookup (global scope, or its partition given); else undefined. */
  private knownLocator(rs: ResolvedStore, key: Buffer, partition: number | undefined): RowLocator | undefined {
    return rs.entry.scope === 'global' || partition !== undefined ? { key, partition } : undefined;
  }

  /** Where a key's rows are: its partition when given (or global scope), else every partition of the table (null if none). */
  private async locator(rs: ResolvedStore, key: Buffer, partition: number | undefined): Promise<RowLocator | null> {
    return this.knownLocator(rs, key, partition) ?? this.partitionsLocator(rs, key);
  }

  /** A key of a partitioned table without its partition: every partition of the table (null if none). */
  private async partitionsLocator(rs: ResolvedStore, key: Buffer): Promise<RowLocator | null> {
    const partitions = await this.ctx.partitions(rs);
    return partitions.length === 0 ? null : { key, partitions };
  }

  private toRecord(rs: ResolvedStore, v: RawVersion | null, validTo?: number): LookupRecord<unknown> | null {
    if (v === null || v.value === null) return null;
    const rec: LookupRecord<unknown> = { value: deserializeWith(rs.valueSerde, v.value, 'value'), timestamp: v.validFrom };
    if (validTo !== undefined) rec.validTo = validTo;
    return rec;
  }

  private reader(rs: ResolvedStore): VersionReads {
    let r = this.readers.get(rs.table);
    if (!r || r instanceof EdgeTableReader !== (rs.edges === true)) {
      const ref = { keyspace: this.ctx.keyspace, table: rs.table, scope: rs.entry.scope, buckets: rs.buckets };
      r = rs.edges === true ? new EdgeTableReader(this.ctx.exec, { ...ref, edges: true }) : new VersionedTableReader(this.ctx.exec, ref);
      if (this.readers.size > 256) this.readers.clear();
      this.readers.set(rs.table, r);
    }
    return r;
  }
}
