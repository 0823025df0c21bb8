import { Client } from 'cassandra-driver';
import { PipelineStatusTable } from '../catalog';
import { Clock, systemClock } from '../clock';
import { generationTable, StoreCatalog, StoreEntry } from '../generations';
import { AdjunctError, isMissingKeyspace, isMissingTable } from '../errors';
import { CqlExecutor } from '../store/cassandra';
import { DEFAULT_KV_BUCKETS, listPartitions, partitionKeyOf, TableColumn, tableColumns } from '../store/cassandra';
import { StreamTimeTable } from '../store/cassandra';
import { serdeByName } from '../store/serde';
import { Serde } from '../store/types';
import { unknownStore } from './lookup-error';
import { ReadCache } from './read-cache';
import { TtlMemo } from './ttl-memo';
import { WriterStreamTimes } from './writer-stream-times';
import { LookupOptions } from './types';

/** A store resolved for one call: its catalog entry, the table of its current generation and its serdes. */
export interface ResolvedStore {
  entry: StoreEntry;
  table: string;
  keySerde: Serde<unknown>;
  valueSerde: Serde<unknown>;
  /** True when the table has the edge layout (a versioned global table clustered by each version's predecessor). */
  edges?: boolean;
  /**
   * Key-hash buckets of the table, the writers' number from the catalog: a kv global table, or a partitioned table
   * whose Cassandra partition is `(partition, bucket)`. Undefined for an unbucketed (older) partitioned table.
   */
  buckets?: number;
}

/** True when Cassandra answered that the table or its keyspace does not exist (nothing written yet, or dropped). */
export function isMissingSchema(e: unknown): boolean {
  if (isMissingTable(e) || isMissingKeyspace(e)) return true;
  return e instanceof AdjunctError && e.cause !== undefined && e.cause !== e && isMissingSchema(e.cause);
}

/** The promise's value, or fallback when it fails because the table/keyspace does not exist yet. */
export async function orIfMissing<T>(promise: Promise<T>, fallback: T): Promise<T> {
  try {
    return await promise;
  } catch (e) {
    if (isMissingSchema(e)) return fallback;
    throw e;
  }
}

/** Shared state of a Lookup: client, executor, catalog/stream-time/partition caches and the optional read cache. */
export class LookupContext {
  readonly exec: CqlExecutor;
  readonly catalog: StoreCatalog;
  readonly status: PipelineStatusTable;
  readonly cache?: ReadCache;
  readonly fetchSize: number;
  readonly cacheMs: number;
  /** Time of cache expiry and readiness waits. */
  readonly clock: Clock;
  private readonly entries: TtlMemo<StoreEntry | null>;
  private readonly streamTimes_: TtlMemo<WriterStreamTimes>;
  private readonly partitionLists: TtlMemo<number[]>;
  private readonly streamTimeTable: StreamTimeTable;
  /** ResolvedStore per cached catalog entry object (a refreshed entry is a new object, so it resolves afresh). */
  private readonly resolved = new WeakMap<StoreEntry, ResolvedStore>();
  private readonly generations = new Map<string, number>();
  private readonly serdes = new Map<string, Serde<unknown>>();
  /** Columns of each table read (a table's layout never changes: read once per table). */
  private readonly columns = new Map<string, Promise<TableColumn[]>>();

  constructor(
    readonly client: Client,
    readonly keyspace: string,
    options: LookupOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.cacheMs = options.generationCacheMs ?? 1000;
    if (!Number.isSafeInteger(this.cacheMs) || this.cacheMs < 0)
      throw new RangeError(`generationCacheMs must be a non-negative integer, got ${String(options.generationCacheMs)}`);
    this.fetchSize = options.fetchSize ?? 500;
    if (!Number.isSafeInteger(this.fetchSize) || this.fetchSize < 1)
      throw new RangeError(`fetchSize must be a positive integer, got ${String(options.fetchSize)}`);
    this.exec = new CqlExecutor(client, { readConsistency: options.readConsistency }, { keyspace });
    this.catalog = new StoreCatalog(client, keyspace);
    this.status = new PipelineStatusTable(client, keyspace);
    this.streamTimeTable = new StreamTimeTable(this.exec, keyspace);
    this.cache = options.cache ? new ReadCache(options.cache, options.clock) : undefined;
    this.entries = new TtlMemo(this.cacheMs, this.clock);
    this.streamTimes_ = new TtlMemo(this.cacheMs, this.clock);
    this.partitionLists = new TtlMemo(this.cacheMs, this.clock);
  }

  /** Catalog entry of a store (cached ≤ generationCacheMs), or null when unknown. */
  async entry(store: string, fresh = false): Promise<StoreEntry | null> {
    if (fresh) this.entries.delete(store);
    const e = await this.entries.get(store, () => orIfMissing(this.catalog.get(store), null));
    if (e) this.noteGeneration(store, e.currentGeneration);
    return e;
  }

  /** The store as resolve() would answer it, when that needs no wait (its entry cached and fresh, and resolved before); else undefined. */
  resolvedNow(store: string): ResolvedStore | undefined {
    const entry = this.entries.peek(store)?.value;
    return entry ? this.resolved.get(entry) : undefined;
  }

  /** Resolves a store once for a call: entry, current generation table and serdes (throws UNKNOWN_STORE). */
  async resolve(store: string): Promise<ResolvedStore> {
    if (typeof store !== 'string' || store.length === 0) throw unknownStore(String(store));
    const entry = await this.entry(store);
    if (!entry) throw unknownStore(store);
    let rs = this.resolved.get(entry);
    if (rs === undefined) {
      const table = generationTable(entry.baseTable, entry.currentGeneration);
      const columns = entry.kind === 'versioned' && entry.scope === 'global' ? await this.columnsOf(table) : undefined;
      rs = {
        entry,
        table,
        keySerde: this.serde(entry.keySerde),
        valueSerde: this.serde(entry.valueSerde),
        buckets: await this.bucketsOf(entry, table),
        edges: columns?.some((c) => c.name === 'prev' && c.kind === 'clustering'),
      };
      // A table not created yet has no layout to keep: the next call resolves it again.
      if (columns?.length !== 0) this.resolved.set(entry, rs);
    }
    return rs;
  }

  /**
   * The buckets a generation's table was written with: the catalog's (the writers' number, never this reader's config)
   * when the table is bucketed; a partitioned table whose partition key lacks `bucket` predates buckets.
   */
  private async bucketsOf(entry: StoreEntry, table: string): Promise<number | undefined> {
    if (entry.scope === 'global') return entry.kind === 'kv' ? (entry.buckets ?? DEFAULT_KV_BUCKETS) : undefined;
    const key = partitionKeyOf(await this.columnsOf(table));
    if (!key.includes('bucket')) return undefined;
    if (entry.buckets === null) {
      throw new AdjunctError(`table ${table} of store ${entry.store} is bucketed, but the catalog records no buckets`, {
        code: 'BUCKETS_UNKNOWN',
        stage: 'lookup',
        context: { store: entry.store, table },
      });
    }
    return entry.buckets;
  }

  /** Columns of a table: one read of system_schema per table (not kept while the table does not exist). */
  private columnsOf(table: string): Promise<TableColumn[]> {
    let columns = this.columns.get(table);
    if (columns === undefined) {
      if (this.columns.size > 1024) this.columns.clear();
      const read = tableColumns(this.exec, { keyspace: this.keyspace, table }, 'read table columns');
      columns = read;
      this.columns.set(table, read);
      const forget = () => {
        if (this.columns.get(table) === read) this.columns.delete(table);
      };
      read.then((c) => c.length === 0 && forget(), forget);
    }
    return columns;
  }

  /** The writers' stream times of a table when cached and fresh (what streamTimes would answer, without a wait); else undefined. */
  streamTimesNow(table: string): WriterStreamTimes | undefined {
    return this.streamTimes_.peek(table)?.value;
  }

  /**
   * Stream time of every writer of a table (from adjunct_stream_time; a writer is a source topic/partition), cached
   * ≤ generationCacheMs. Fetched alongside the reads of a lookup, so a cache miss adds no round trip to a get.
   */
  streamTimes(table: string): Promise<WriterStreamTimes> {
    return this.streamTimes_.get(
      table,
      async () => new WriterStreamTimes(await orIfMissing(this.streamTimeTable.loadAll(table), new Map<string, number>())),
    );
  }

  /** Source partitions present in a partitioned store's table (SELECT DISTINCT), cached ≤ generationCacheMs. */
  partitions(rs: ResolvedStore): Promise<number[]> {
    const bucketed = rs.buckets !== undefined;
    return this.partitionLists.get(rs.table, () => listPartitions(this.exec, `${this.keyspace}.${rs.table}`, 'list partitions', bucketed));
  }

  /** Forgets a store's cached catalog entry: its next call reads the catalog again. */
  forget(store: string): void {
    this.entries.delete(store);
  }

  /** Forgets cached metadata (catalog entries, stream times, partitions). */
  invalidate(): void {
    this.entries.clear();
    this.streamTimes_.clear();
    this.partitionLists.clear();
  }

  private serde(name: string): Serde<unknown> {
    let s = this.serdes.get(name);
    if (!s) {
      try {
        s = serdeByName(name);
      } catch (e) {
        throw new AdjunctError(`catalog names serde ${JSON.stringify(name)} which this reader does not know`, {
          code: 'UNKNOWN_SERDE',
          stage: 'lookup',
          cause: e,
        });
      }
      this.serdes.set(name, s);
    }
    return s;
  }

  private noteGeneration(store: string, generation: number): void {
    const before = this.generations.get(store);
    if (before !== generation) {
      this.generations.set(store, generation);
      if (before !== undefined) this.cache?.purgeStore(store);
    }
  }
}
