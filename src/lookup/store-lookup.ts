import { isTableNotOpenYet, mayBeMissingTable } from '../errors';
import { generationTable, StoreEntry } from '../generations';
import { ByteRange, keyBounds, prefixRange } from '../store/key-range';
import { KeyValue } from '../store/types';
import { encodeKeyWith, requireKey, requireQueryTime } from '../store/validation';
import { coerceKey } from './key-text';
import { KvReads } from './kv-reads';
import { isMissingSchema, LookupContext, ResolvedStore } from './lookup-context';
import { invalidLookupArgument, tableGone, wrongKind } from './lookup-error';
import { ReadCache } from './read-cache';
import { LookupHistoryOptions, LookupRecord, PageRequest, PageResult, ReadOptions, ScanOptions, StoreInfo, WriterHorizon } from './types';
import { VersionedReads } from './versioned-reads';

/**
 * Waits before each new attempt of a point read whose table Cassandra does not know, after the catalog is read again:
 * the generation it named was replaced and dropped (a rebuild) while its entry was cached, or it was created just now
 * and this coordinator has not seen the schema change yet.
 */
const MISSING_TABLE_WAITS_MS = [0, 200, 1000];
/** The attempt number of a read that may not be retried (a scan that has already yielded entries). */
const NO_RETRY = Number.POSITIVE_INFINITY;

/**
 * Cassandra does not know the table (or, with "unprepared" surfacing, its statement's table was dropped), or has not
 * opened a table created just now ("Unknown CF").
 */
function tableMayBeGone(e: unknown): boolean {
  return isMissingSchema(e) || mayBeMissingTable(e) || isTableNotOpenYet(e);
}

/** The read options of getValue: the version without its validTo. */
const VALUE_ONLY: ReadOptions = Object.freeze({ validTo: false });

function valueOrNull<V>(r: LookupRecord<V> | null): V | null {
  return r?.value ?? null;
}

/** Largest page a single page() call returns. */
export const MAX_PAGE_SIZE = 10_000;

function checkLimit(limit: unknown): number | undefined {
  if (limit === undefined) return undefined;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1)
    throw invalidLookupArgument(`limit must be a positive integer, got ${String(limit)}`);
  return limit;
}

function checkPartition(p: unknown): number | undefined {
  if (p === undefined) return undefined;
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 0 || p > 0x7fffffff)
    throw invalidLookupArgument(`partition must be an integer ≥ 0, got ${String(p)}`);
  return p;
}

/** Converts a catalog entry to StoreInfo. */
export function storeInfoOf(e: StoreEntry): StoreInfo {
  return {
    name: e.store,
    kind: e.kind,
    scope: e.scope,
    keySerde: e.keySerde,
    valueSerde: e.valueSerde,
    generation: e.currentGeneration,
    table: generationTable(e.baseTable, e.currentGeneration),
    historyRetentionMs: e.historyRetentionMs,
    buildingGeneration: e.buildingGeneration,
    previousGeneration: e.previousGeneration,
  };
}

/**
 * Read access to one store. Every call resolves the store's current generation once (from the catalog, cached
 * ≤ generationCacheMs) and reads only that generation's table, so one answer never mixes generations. Serdes come
 * from the catalog entry; K and V are the caller's view of what they decode to.
 */
export class StoreLookup<K = unknown, V = unknown> {
  constructor(
    readonly name: string,
    private readonly ctx: LookupContext,
    private readonly versioned: VersionedReads,
    private readonly kv: KvReads,
    private readonly pin?: ResolvedStore,
  ) {}

  /** This store pinned to its current generation: the returned accessor's info() and reads all use that one resolution. */
  async pinned(): Promise<StoreLookup<K, V>> {
    return new StoreLookup<K, V>(this.name, this.ctx, this.versioned, this.kv, await this.resolve());
  }

  /** The store's shape and current generation (the pinned one for a pinned accessor). */
  async info(): Promise<StoreInfo> {
    return storeInfoOf((await this.resolve()).entry);
  }

  /**
   * Latest value (one Cassandra read) or, for versioned stores, the version valid as of asOf with its validTo (two
   * parallel reads); with `validTo: false` the version as of asOf without it (one read, see getValue).
   */
  get(key: K, asOfTime?: number, options: ReadOptions = {}): Promise<LookupRecord<V> | null> {
    return this.onCurrentTable(() => this.getOnce(key, asOfTime, options));
  }

  /**
   * One attempt of get. A store whose catalog entry is cached is read without a wait of its own: the get is the read's
   * promise and a step or two after it (a get is CPU the caller spends per lookup).
   */
  private getOnce(key: K, asOfTime: number | undefined, options: ReadOptions): Promise<LookupRecord<V> | null> {
    const asOf = asOfTime === undefined ? undefined : requireQueryTime(asOfTime, 'asOf');
    const partition = checkPartition(options?.partition);
    const validTo = options?.validTo !== false;
    const rs = this.resolvedNow();
    if (rs !== undefined) return this.getResolved(rs, key, asOf, partition, validTo);
    return this.resolve().then((r) => this.getResolved(r, key, asOf, partition, validTo));
  }

  /** get on a resolved store: checks the kind, encodes the key, then one read (a cached latest value: none). */
  private getResolved(
    rs: ResolvedStore,
    key: K,
    asOf: number | undefined,
    partition: number | undefined,
    validTo: boolean,
  ): Promise<LookupRecord<V> | null> {
    if (asOf !== undefined && rs.entry.kind !== 'versioned') throw wrongKind(this.name, rs.entry.kind, 'an as-of get');
    const bytes = this.encode(rs, key);
    if (asOf !== undefined && !validTo) return this.versioned.valueAsOf(rs, bytes, asOf, partition) as Promise<LookupRecord<V> | null>;
    const cache = asOf === undefined ? this.ctx.cache : undefined;
    const ck = cache ? ReadCache.keyOf(this.name, rs.table, bytes, partition) : '';
    const hit = cache?.get(ck);
    if (hit) return Promise.resolve(hit.v as LookupRecord<V> | null);
    const read = rs.entry.kind === 'versioned' ? this.versioned.get(rs, bytes, asOf, partition) : this.kv.get(rs, bytes, partition);
    if (cache === undefined) return read as Promise<LookupRecord<V> | null>;
    return read.then((rec) => {
      cache.set(ck, rec);
      return rec as LookupRecord<V> | null;
    });
  }

  /**
   * Just the value of get(), or null. As of a time it skips validTo, so it costs one read instead of two (a second,
   * sequential one only when asOf is below the key's retention horizon): the read a stream-table join needs.
   */
  getValue(key: K, asOf?: number, options: ReadOptions = {}): Promise<V | null> {
    return this.get(key, asOf, options?.partition === undefined ? VALUE_ONLY : { ...options, validTo: false }).then(valueOrNull);
  }

  /** KIP-968 history of a key (versioned stores): versions valid in [fromTime, toTime], newest first unless order 'asc'. */
  async history(key: K, options: LookupHistoryOptions = {}, read: ReadOptions = {}): Promise<LookupRecord<V>[]> {
    const partition = checkPartition(read.partition);
    return this.onCurrentTable(async () => {
      const rs = await this.resolve();
      if (rs.entry.kind !== 'versioned') throw wrongKind(this.name, rs.entry.kind, 'history');
      return (await this.versioned.history(rs, this.encode(rs, key), options, partition)) as LookupRecord<V>[];
    });
  }

  /** Versioned stores: each writer's (source partition's) persisted stream time and retention horizon; [] for kv stores. */
  async horizons(): Promise<WriterHorizon[]> {
    const rs = await this.resolve();
    return rs.entry.kind === 'versioned' ? this.versioned.horizons(rs) : [];
  }

  /** Versioned stores: the retention horizon applying to a key (its partition's), or null if the key has no versions. */
  async horizonOf(key: K, read: ReadOptions = {}): Promise<WriterHorizon | null> {
    const partition = checkPartition(read.partition);
    const rs = await this.resolve();
    if (rs.entry.kind !== 'versioned') throw wrongKind(this.name, rs.entry.kind, 'horizonOf');
    return this.versioned.keyHorizon(rs, this.encode(rs, key), partition);
  }

  /** kv stores: keys in [from, to] (either bound optional) in encoded-key order, paged lazily. */
  range(from?: K, to?: K, options: ScanOptions = {}): AsyncIterable<KeyValue<K, V>> {
    return this.scan((rs) => this.bounds(rs, from, to), false, options);
  }

  /** kv stores: keys in [from, to] in descending order. */
  reverseRange(from?: K, to?: K, options: ScanOptions = {}): AsyncIterable<KeyValue<K, V>> {
    return this.scan((rs) => this.bounds(rs, from, to), true, options);
  }

  /** kv stores: entries whose encoded key starts with the encoded prefix (tuple prefixes match element-wise). */
  prefixScan(prefix: K, options: ScanOptions = {}): AsyncIterable<KeyValue<K, V>> {
    return this.scan((rs) => prefixRange(this.encode(rs, prefix)), false, options);
  }

  /** kv stores: every entry in encoded-key order. */
  all(options: ScanOptions = {}): AsyncIterable<KeyValue<K, V>> {
    return this.scan(() => ({}), false, options);
  }

  /** kv stores: every entry in descending order. */
  reverseAll(options: ScanOptions = {}): AsyncIterable<KeyValue<K, V>> {
    return this.scan(() => ({}), true, options);
  }

  /** kv stores: one page of a range or prefix scan, resumable with the returned encoded key (`after`). */
  async page(req: PageRequest<K>): Promise<PageResult<K, V>> {
    const limit = checkLimit(req.limit);
    if (limit === undefined || limit > MAX_PAGE_SIZE) throw invalidLookupArgument(`limit must be in 1..${MAX_PAGE_SIZE}`);
    // A page is read whole from one generation: a failed one is read again from the current generation.
    return this.onCurrentTable(() => this.pageOnce(req, limit));
  }

  private async pageOnce(req: PageRequest<K>, limit: number): Promise<PageResult<K, V>> {
    const rs = await this.kvStore('a range scan');
    let range: ByteRange = req.prefix !== undefined ? prefixRange(this.encode(rs, req.prefix)) : this.bounds(rs, req.from, req.to);
    if (req.after !== undefined) {
      const next = Buffer.concat([req.after, Buffer.from([0])]);
      if (range.from === undefined || Buffer.compare(next, range.from) > 0) range = { ...range, from: next };
    }
    const items: { key: K; value: V }[] = [];
    let last: Buffer | undefined;
    let more = false;
    for await (const r of this.kv.scan(rs, range, false, limit + 1)) {
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push({ key: r.key as K, value: r.value as V });
      last = r.encodedKey;
    }
    return { items, next: more ? last : undefined, generation: rs.entry.currentGeneration };
  }

  /**
   * A lazy scan of one generation. Until its first entry it moves to the current generation as a get does (its table
   * gone: the catalog read again, retried); after that it never mixes generations, and a table gone fails it (TABLE_MISSING).
   */
  private async *scan(rangeOf: (rs: ResolvedStore) => ByteRange, reverse: boolean, options: ScanOptions): AsyncGenerator<KeyValue<K, V>> {
    const limit = checkLimit(options.limit);
    let yielded = false;
    for (let attempt = 0; ; attempt++) {
      try {
        const rs = await this.kvStore(reverse ? 'a reverse scan' : 'a range scan');
        const range = rangeOf(rs);
        for await (const r of this.kv.scan(rs, range, reverse, limit)) {
          yielded = true;
          yield { key: r.key as K, value: r.value as V };
        }
        return;
      } catch (e) {
        await this.afterMissingTable(e, yielded ? NO_RETRY : attempt);
      }
    }
  }

  private async kvStore(op: string): Promise<ResolvedStore> {
    const rs = await this.resolve();
    if (rs.entry.kind !== 'kv') throw wrongKind(this.name, rs.entry.kind, op);
    return rs;
  }

  /**
   * Runs a read of the current generation; when Cassandra does not know its table, reads the catalog again and retries
   * (MISSING_TABLE_WAITS_MS), then gives up with that error. A pinned accessor reads its own generation only: it fails at once.
   */
  private onCurrentTable<T>(read: () => Promise<T>, attempt = 0): Promise<T> {
    let p: Promise<T>;
    try {
      p = read();
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.catch(async (e: unknown) => {
      await this.afterMissingTable(e, attempt);
      return this.onCurrentTable(read, attempt + 1);
    });
  }

  /**
   * After a failed read (`attempt` retries made so far, NO_RETRY when none may follow): rethrows a failure that is not a missing table; gives up with
   * TABLE_MISSING when pinned or out of waits; else waits and forgets the catalog entry, for the caller to read again.
   */
  private async afterMissingTable(e: unknown, attempt: number): Promise<void> {
    if (!tableMayBeGone(e)) throw e;
    if (this.pin !== undefined || attempt >= MISSING_TABLE_WAITS_MS.length) {
      throw tableGone(this.name, (this.pin ?? (await this.resolve().catch(() => undefined)))?.table, e);
    }
    const wait = MISSING_TABLE_WAITS_MS[attempt];
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    this.ctx.forget(this.name);
  }

  /** The store as resolve() would answer it, when that needs no wait; else undefined. */
  private resolvedNow(): ResolvedStore | undefined {
    return this.pin ?? this.ctx.resolvedNow(this.name);
  }

  /** The pinned resolution, else the store's current one (catalog entry cached ≤ generationCacheMs). */
  private resolve(): Promise<ResolvedStore> {
    return this.pin !== undefined ? Promise.resolve(this.pin) : this.ctx.resolve(this.name);
  }

  private bounds(rs: ResolvedStore, from?: K, to?: K): ByteRange {
    return keyBounds(from, to, (k) => this.encode(rs, k));
  }

  private encode(rs: ResolvedStore, key: unknown): Buffer {
    return encodeKeyWith(rs.keySerde, coerceKey(rs.entry.keySerde, requireKey(key)));
  }
}
