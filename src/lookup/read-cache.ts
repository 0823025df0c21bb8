import { LRUCache } from 'lru-cache';
import { Clock } from '../clock';

/** Settings of the optional latest-value read cache. */
export interface ReadCacheOptions {
  /** Most cached keys (LRU eviction). */
  maxEntries: number;
  /** Lifetime of an entry in ms. */
  ttlMs: number;
}

/** LRU + TTL cache of latest-value lookups, keyed by store, generation table and encoded key; a store's entries are purged when its generation changes. */
export class ReadCache {
  private readonly lru: LRUCache<string, { v: unknown }>;

  /** `clock` ages the entries when given (tests); by default lru-cache's monotonic timer does. */
  constructor(options: ReadCacheOptions, clock?: Clock) {
    if (!Number.isSafeInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError(`cache.maxEntries must be a positive integer, got ${String(options.maxEntries)}`);
    if (!Number.isSafeInteger(options.ttlMs) || options.ttlMs < 1)
      throw new RangeError(`cache.ttlMs must be a positive integer, got ${String(options.ttlMs)}`);
    // ttlResolution 0: an injected clock is read on every access, never cached for a real millisecond.
    const timer = clock ? { perf: clock, ttlResolution: 0 } : {};
    this.lru = new LRUCache({ max: options.maxEntries, ttl: options.ttlMs, ...timer });
  }

  /** Cache key of a latest-value read. */
  static keyOf(store: string, table: string, key: Buffer, partition?: number): string {
    return `${store}\u0000${table}\u0000${partition ?? ''}\u0000${key.toString('base64')}`;
  }

  /** The cached result, or undefined on a miss (null results are cached too). */
  get(key: string): { v: unknown } | undefined {
    return this.lru.get(key);
  }

  /** Caches a result. */
  set(key: string, value: unknown): void {
    this.lru.set(key, { v: value });
  }

  /** Drops every entry of a store (called when its generation changes). */
  purgeStore(store: string): void {
    const prefix = `${store}\u0000`;
    for (const k of [...this.lru.keys()]) if (k.startsWith(prefix)) this.lru.delete(k);
  }

  /** Number of cached entries. */
  get size(): number {
    return this.lru.size;
  }
}
