import type { HistoryOptions } from '../store/types';
import type { Client, ClientOptions } from 'cassandra-driver';
import type { ConsistencyOption } from '../store/cassandra';
import type { Clock } from '../clock';
import type { ReadCacheOptions } from './read-cache';

/** Options of openLookup. */
export interface LookupOptions {
  /** A connected (or connectable) driver client owned by the caller; never closed by the lookup. */
  client?: Client;
  /** Driver options to create (and own, i.e. close on close()) a client when `client` is not given. */
  cassandra?: ClientOptions;
  /** Keyspace holding the catalog and the store tables. */
  keyspace: string;
  /**
   * How long a store's catalog entry (its current generation), its writers' stream time and its partition list are
   * reused before being read again, in ms. Default 1000. After a generation switch, readers move to the new generation
   * within this interval; 0 reads the catalog on every call.
   */
  generationCacheMs?: number;
  /** Optional LRU+TTL cache of latest-value reads (kv get and versioned get without asOf). Off by default. */
  cache?: ReadCacheOptions;
  /** Consistency of reads (default localQuorum). */
  readConsistency?: ConsistencyOption;
  /** Rows per page of scans and history (default 500). */
  fetchSize?: number;
  /** Time of cache expiry and readiness waits (default: the system clock; tests inject a ManualClock). */
  clock?: Clock;
}

/** What a reader knows about a store (from the catalog). */
export interface StoreInfo {
  name: string;
  kind: 'versioned' | 'kv';
  scope: 'partitioned' | 'global';
  keySerde: string;
  valueSerde: string;
  generation: number;
  table: string;
  historyRetentionMs: number;
  buildingGeneration: number | null;
  previousGeneration: number | null;
}

/** A lookup answer: the value, and for versioned stores when it became valid (and stopped being valid, if known). */
export interface LookupRecord<V> {
  value: V;
  /** validFrom of the version (versioned stores only). */
  timestamp?: number;
  /** When the version stopped being valid (history entries other than the latest). */
  validTo?: number;
}

/** A writer (source topic/partition) of a versioned store with its persisted stream time and retention horizon. */
export interface WriterHorizon {
  /** Writer identity, `<topic>:<partition>` for the worker's writers. */
  writer: string;
  streamTime: number;
  /** streamTime − historyRetention: as-of reads below it answer only with the key's latest version. */
  horizon: number;
}

/** Per-call read options. */
export interface ReadOptions {
  /** Partitioned versioned/kv stores: read only this source partition (default: all partitions in one IN query). */
  partition?: number;
  /**
   * As-of gets of versioned stores: `false` answers the version (value and timestamp) without its validTo, in one read
   * instead of two (a second only below the key's retention horizon). Default true.
   */
  validTo?: boolean;
}

/** Options of a KIP-968 history query through the lookup: the store's `HistoryOptions` plus a page bound. */
export interface LookupHistoryOptions extends HistoryOptions {
  /** Order desc only: stop after this many versions, newest first (pages read only what they return). */
  maxVersions?: number;
}

/** Options of kv scans. */
export interface ScanOptions {
  /** Stop after this many entries. */
  limit?: number;
}

/** One page of a kv scan. */
export interface PageRequest<K> {
  /** Inclusive lower bound (ignored when `after` is set and greater). */
  from?: K;
  /** Inclusive upper bound. */
  to?: K;
  /** Entries whose encoded key starts with this prefix (encoded with the key serde). */
  prefix?: K;
  /** Resume strictly after this encoded key (a cursor). */
  after?: Buffer;
  /** Page size (1..10000). */
  limit: number;
}

/** A page of entries plus the encoded last key when more entries follow. */
export interface PageResult<K, V> {
  items: { key: K; value: V }[];
  /** Encoded key of the last item when there may be more (pass back as `after`). */
  next?: Buffer;
  generation: number;
}

/** Readiness of one bootstrap pipeline at its store's current generation. */
export interface PipelineReadiness {
  pipeline: string;
  store: string;
  generation: number;
  state: string;
  recordsDone: number;
  recordsTotal: number;
}

/** Readiness of every known bootstrap pipeline. */
export interface Readiness {
  ready: boolean;
  pipelines: PipelineReadiness[];
  notReady: string[];
}
