import { baseTableForStore } from '../../../src/store/cassandra';
/** Test fixtures: write store tables through the real store classes and register them in the catalog. */
import { Client } from 'cassandra-driver';
import { ensureCatalog } from '../../../src/catalog';
import { generationTable, StoreCatalog } from '../../../src/generations';
import { openCassandraKeyValueStore } from '../../../src/store/cassandra/open-kv-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { serdeByName } from '../../../src/store/serde';
import { DEFAULT_KV_BUCKETS, DEFAULT_PARTITION_BUCKETS } from '../../../src/store/cassandra/key-bucket';
import { createKeyspace } from '../helpers';
import { createUnbucketedTable } from '../store/support';

/** Shape of a test store. */
export interface StoreShape {
  store: string;
  kind: 'versioned' | 'kv';
  scope: 'partitioned' | 'global';
  keySerde?: string;
  valueSerde?: string;
  historyRetentionMs?: number;
  /** Partitioned scope: tables in the layout from before key-hash buckets (catalog entry without buckets). */
  unbucketed?: boolean;
  /** Versioned global scope: tables of the edge layout. */
  edges?: boolean;
}

/** The buckets the worker records for a store of this shape (null: none, or a store from before buckets). */
function bucketsOf(s: StoreShape): number | null {
  if (s.scope === 'global') return s.kind === 'kv' ? DEFAULT_KV_BUCKETS : null;
  return s.unbucketed ? null : DEFAULT_PARTITION_BUCKETS;
}

/** One version to write (value null = tombstone / kv delete). */
export interface Write {
  key: unknown;
  value: unknown;
  ts?: number;
  partition?: number;
}

/** Base table name of a test store: the production rule, not a copy of it. */
export const baseOf = (store: string): string => baseTableForStore(store);

/** Creates keyspace + catalog tables. */
export async function prepareKeyspace(client: Client, keyspace: string): Promise<void> {
  await createKeyspace(client, keyspace);
  await ensureCatalog(client, keyspace);
}

/** Registers the store (generation 1) in the catalog. */
export async function register(client: Client, keyspace: string, s: StoreShape): Promise<void> {
  await new StoreCatalog(client, keyspace).register({
    store: s.store,
    kind: s.kind,
    scope: s.scope,
    keySerde: s.keySerde ?? 'string',
    valueSerde: s.valueSerde ?? 'json',
    baseTable: baseOf(s.store),
    historyRetentionMs: s.historyRetentionMs ?? 86_400_000,
    buckets: bucketsOf(s),
  });
}

/** Writes versions/entries into the table of a generation (one writer per partition, flushed so stream time is persisted). */
export async function writeTable(client: Client, keyspace: string, s: StoreShape, generation: number, writes: Write[]): Promise<void> {
  const tableName = generationTable(baseOf(s.store), generation);
  const keySerde = serdeByName(s.keySerde ?? 'string');
  const valueSerde = serdeByName(s.valueSerde ?? 'json');
  const byPartition = new Map<number, Write[]>();
  for (const w of writes) {
    const p = w.partition ?? 0; // global tables too: each source partition is its own writer (stream time)
    byPartition.set(p, [...(byPartition.get(p) ?? []), w]);
  }
  if (byPartition.size === 0) byPartition.set(0, []);
  if (s.unbucketed) await createUnbucketedTable(client, keyspace, tableName, s.kind);
  const buckets = bucketsOf(s) ?? undefined;
  for (const [partition, ws] of byPartition) {
    const common = {
      client,
      keyspace,
      storeName: s.store,
      tableName,
      scope: s.scope,
      partition: s.scope === 'partitioned' ? partition : undefined,
      keySerde,
      valueSerde,
    };
    if (s.kind === 'versioned') {
      const store = await openCassandraVersionedStore<unknown, unknown>({
        ...common,
        writerId: `t:${partition}`,
        historyRetentionMs: s.historyRetentionMs ?? 86_400_000,
        buckets,
        layout: s.edges ? 'edges' : undefined,
      });
      for (const w of ws) await store.put(w.key, w.value, w.ts ?? 0);
      await store.close();
    } else {
      const store = await openCassandraKeyValueStore<unknown, unknown>({ ...common, buckets });
      for (let i = 0; i < ws.length; i += 200) await store.putAll(ws.slice(i, i + 200).map((w) => ({ key: w.key, value: w.value })));
      await store.close();
    }
  }
}

/** Registers a store and writes generation 1. */
export async function seed(client: Client, keyspace: string, s: StoreShape, writes: Write[]): Promise<void> {
  await register(client, keyspace, s);
  await writeTable(client, keyspace, s, 1, writes);
}

/** Builds the next generation with other data and switches the catalog to it; returns its number. */
export async function switchGeneration(client: Client, keyspace: string, s: StoreShape, writes: Write[]): Promise<number> {
  const catalog = new StoreCatalog(client, keyspace);
  const gen = await catalog.beginBuild(s.store);
  await writeTable(client, keyspace, s, gen, writes);
  await catalog.switchTo(s.store, gen, 3_600_000);
  return gen;
}

/** Drains an async iterable into an array. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Wraps client.execute to count calls (every Cassandra request the lookup sends goes through it). */
export function countExecutes(client: Client): { count(): number; reset(): void; queries: string[] } {
  const queries: string[] = [];
  const orig = client.execute.bind(client) as (...a: unknown[]) => unknown;
  (client as unknown as { execute: (...a: unknown[]) => unknown }).execute = (...a: unknown[]) => {
    queries.push(String(a[0]));
    return orig(...a);
  };
  return { count: () => queries.length, reset: () => void (queries.length = 0), queries };
}
