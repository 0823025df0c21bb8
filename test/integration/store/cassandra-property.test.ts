import fc from 'fast-check';
import { ensureCatalog } from '../../../src/catalog';
import { DEFAULT_PARTITION_BUCKETS } from '../../../src/store/cassandra/key-bucket';
import { generationTable, StoreCatalog } from '../../../src/generations';
import { Lookup, openLookup } from '../../../src/lookup';
import { CassandraVersionedStore } from '../../../src/store/cassandra/cassandra-versioned-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { MemoryVersionedStore } from '../../../src/store/memory/memory-versioned-store';
import { PUT_RETURN_CODE_NOT_PUT, StoreScope, VersionedKeyValueStore } from '../../../src/store/types';
import { isolatedStore, useStoreKeyspace } from './support';

jest.setTimeout(300_000);

type Op =
  | { op: 'put'; key: string; value: string | null; t: number }
  | { op: 'delete'; key: string; t: number }
  | { op: 'get'; key: string }
  | { op: 'asOf'; key: string; t: number }
  | { op: 'history'; key: string; from?: number; to?: number; order: 'asc' | 'desc' }
  | { op: 'restart' }
  // The sink's path: write() (no validTo returned), then a checkpoint flush(streamTime) that runs the blind clean-up.
  | { op: 'sinkWrite'; key: string; value: string | null; t: number }
  | { op: 'checkpoint' }
  // A tombstone without an event time (extract.timestamp.onMissing: streamTime): it is written at the writer's stream
  // time (time 0 before any), so it never moves stream time.
  | { op: 'tombstoneAtStreamTime'; key: string };

const key = fc.constantFrom('a', 'b', 'c');
const time = fc.integer({ min: 0, max: 40 });
/** A history range with fromTime ≤ toTime (fromTime after toTime is an INVALID_ARGUMENT in both stores, as in Kafka). */
const inOrder = <T extends { from?: number; to?: number }>(o: T): T =>
  o.from !== undefined && o.to !== undefined && o.from > o.to ? { ...o, from: o.to, to: o.from } : o;
/** A history query of one of the keys, optional bounds in order. */
const historyArb = <O extends string>(op: O, keys: fc.Arbitrary<string>) =>
  fc
    .record(
      { op: fc.constant(op), key: keys, from: time, to: time, order: fc.constantFrom('asc' as const, 'desc' as const) },
      { requiredKeys: ['op', 'key', 'order'] },
    )
    .map(inOrder);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant('put' as const), key, value: fc.option(fc.constantFrom('x', 'y', 'z'), { freq: 4 }), t: time }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key, t: time }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), key }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('asOf' as const), key, t: time }) },
  {
    weight: 2,
    arbitrary: historyArb('history', key),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('sinkWrite' as const),
      key,
      value: fc.option(fc.constantFrom('x', 'y', 'z'), { freq: 4 }),
      t: time,
    }),
  },
  { weight: 2, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('tombstoneAtStreamTime' as const), key }) },
);

const ks = useStoreKeyspace('it_store_prop');
let counter = 0;

async function apply(
  s: VersionedKeyValueStore<string, string>,
  o: Exclude<Op, { op: 'restart' | 'checkpoint' | 'sinkWrite' }>,
): Promise<unknown> {
  switch (o.op) {
    case 'tombstoneAtStreamTime': {
      const before = s.observedStreamTime();
      const result = await s.put(o.key, null, Number.isFinite(before) ? before : 0);
      if (Number.isFinite(before) && s.observedStreamTime() !== before) throw new Error('a tombstone at stream time moved stream time');
      return result;
    }
    case 'put':
      return s.put(o.key, o.value, o.t);
    case 'delete':
      return s.delete(o.key, o.t);
    case 'get':
      return s.get(o.key);
    case 'asOf':
      return s.get(o.key, o.t);
    case 'history':
      return s.history(o.key, { fromTime: o.from, toTime: o.to, order: o.order });
  }
}

/** The layouts under test: partitioned (bucketed), global, and global with the edge layout. */
const layouts: { scope: StoreScope; layout?: 'edges'; name: string }[] = [
  { scope: 'partitioned', name: 'partitioned' },
  { scope: 'global', name: 'global' },
  { scope: 'global', layout: 'edges', name: 'global, edge layout' },
];

for (const { scope, layout, name } of layouts) {
  it(`Cassandra ${name} versioned store answers exactly like the memory store`, async () => {
    const retention = 8;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 30 }), async (ops) => {
        const n = ++counter;
        const open = (): Promise<CassandraVersionedStore<string, string>> =>
          openCassandraVersionedStore({
            client: ks.client,
            keyspace: ks.keyspace,
            storeName: `prop-${scope}${layout ?? ''}`,
            ...isolatedStore(scope, n, 'r'),
            historyRetentionMs: retention,
            layout,
          });
        const memory = new MemoryVersionedStore<string, string>({ historyRetentionMs: retention });
        let cass = await open();
        try {
          for (const [i, o] of ops.entries()) {
            if (o.op === 'restart') {
              await cass.close();
              cass = await open();
            } else if (o.op === 'checkpoint') {
              await cass.flush(cass.observedStreamTime());
              await new Promise((r) => setTimeout(r, 20)); // the blind deletes run in the background
            } else if (o.op === 'sinkWrite') {
              const expected = (await memory.put(o.key, o.value, o.t)) === PUT_RETURN_CODE_NOT_PUT ? 'expired' : 'written';
              const actual = await cass.write(o.key, o.value, o.t);
              if (actual !== expected) throw new Error(`op #${i} ${JSON.stringify(o)}: cassandra ${actual} != memory ${expected}`);
            } else {
              const expected = await apply(memory, o);
              const actual = await apply(cass, o);
              if (JSON.stringify(actual) !== JSON.stringify(expected)) {
                throw new Error(`op #${i} ${JSON.stringify(o)}: cassandra ${JSON.stringify(actual)} != memory ${JSON.stringify(expected)}`);
              }
            }
            expect(cass.observedStreamTime()).toBe(memory.observedStreamTime());
          }
          // After flushing (which runs the retention clean-up), every answer is still the same.
          await cass.flush();
          for (const k of ['a', 'b', 'c']) {
            expect(await cass.history(k)).toEqual(await memory.history(k));
            for (let t = 0; t <= 40; t += 3) expect(await cass.get(k, t)).toEqual(await memory.get(k, t));
          }
        } finally {
          await cass.close();
        }
      }),
      { numRuns: 50 },
    );
  });
}

// Multi-partition dimension: two source partitions write one table (each its own writer and stream time), and the
// lookup library reads it back. Each key belongs to one partition, as in a Kafka changelog; the reference is one
// memory store per partition, so every lookup answer must use the stream time of the key's own partition.
type MultiOp =
  | Exclude<Op, { op: 'restart' | 'checkpoint' | 'sinkWrite' }>
  | { op: 'restart' }
  | { op: 'checkpoint' }
  | { op: 'sinkWrite'; key: string; value: string | null; t: number }
  | { op: 'lookupAsOf'; key: string; t: number }
  | { op: 'lookupHistory'; key: string; from?: number; to?: number; order: 'asc' | 'desc' };

const multiKey = fc.constantFrom('a', 'b', 'c', 'd');
const partitionOf = (k: string): number => (k === 'a' || k === 'c' ? 0 : 1);
const multiOpArb: fc.Arbitrary<MultiOp> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('put' as const),
      key: multiKey,
      value: fc.option(fc.constantFrom('x', 'y', 'z'), { freq: 4 }),
      t: time,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), key: multiKey, t: time }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('asOf' as const), key: multiKey, t: time }) },
  {
    weight: 1,
    arbitrary: historyArb('history', multiKey),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('lookupAsOf' as const), key: multiKey, t: time }) },
  {
    weight: 2,
    arbitrary: historyArb('lookupHistory', multiKey),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('sinkWrite' as const),
      key: multiKey,
      value: fc.option(fc.constantFrom('x', 'y', 'z'), { freq: 4 }),
      t: time,
    }),
  },
  { weight: 2, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('tombstoneAtStreamTime' as const), key: multiKey }) },
);

describe('several source partitions, read through the lookup library', () => {
  let lookup: Lookup;
  beforeAll(async () => {
    await ensureCatalog(ks.client, ks.keyspace);
    lookup = await openLookup({ client: ks.client, keyspace: ks.keyspace, generationCacheMs: 0 });
  });
  afterAll(async () => {
    await lookup?.close();
  });

  for (const { scope, layout, name } of layouts) {
    it(`${name}: store and lookup answers equal one memory store per partition`, async () => {
      const retention = 8;
      const storeName = `multi-${scope}${layout ?? ''}`;
      await new StoreCatalog(ks.client, ks.keyspace).register({
        store: storeName,
        kind: 'versioned',
        scope,
        keySerde: 'string',
        valueSerde: 'string',
        baseTable: `multi_${scope}${layout ?? ''}`,
        historyRetentionMs: retention,
        // The writers below create the table with the default buckets; the catalog records them for readers.
        buckets: scope === 'partitioned' ? DEFAULT_PARTITION_BUCKETS : null,
      });
      const reader = lookup.store<string, string>(storeName);
      await fc.assert(
        fc.asyncProperty(fc.array(multiOpArb, { minLength: 10, maxLength: 30 }), async (ops) => {
          const n = ++counter;
          const k = (key: string): string => `${n}-${key}`; // each run has its own keys and writers in the shared table
          const open = (p: number): Promise<CassandraVersionedStore<string, string>> =>
            openCassandraVersionedStore({
              client: ks.client,
              keyspace: ks.keyspace,
              storeName,
              tableName: generationTable(`multi_${scope}${layout ?? ''}`, 1),
              scope,
              partition: scope === 'partitioned' ? p : undefined,
              writerId: `run${n}:${p}`,
              historyRetentionMs: retention,
              layout,
            });
          const memory = [0, 1].map(() => new MemoryVersionedStore<string, string>({ historyRetentionMs: retention }));
          const cass = [await open(0), await open(1)];
          // The sink's checkpoint: persist stream time, then the blind clean-up runs in the background.
          const flushAll = async () => {
            await Promise.all(cass.map((c) => c.flush(c.observedStreamTime())));
            await new Promise((r) => setTimeout(r, 20));
          };
          const check = async (i: number, o: MultiOp, actual: unknown, expected: unknown) => {
            if (JSON.stringify(actual) !== JSON.stringify(expected)) {
              throw new Error(`op #${i} ${JSON.stringify(o)}: cassandra ${JSON.stringify(actual)} != memory ${JSON.stringify(expected)}`);
            }
          };
          try {
            for (const [i, o] of ops.entries()) {
              if (o.op === 'restart') {
                for (const p of [0, 1]) {
                  await cass[p].close();
                  cass[p] = await open(p);
                }
              } else if (o.op === 'checkpoint') {
                await flushAll();
              } else if (o.op === 'sinkWrite') {
                const p = partitionOf(o.key);
                const expected = (await memory[p].put(o.key, o.value, o.t)) === PUT_RETURN_CODE_NOT_PUT ? 'expired' : 'written';
                await check(i, o, await cass[p].write(k(o.key), o.value, o.t), expected);
              } else if (o.op === 'lookupAsOf') {
                await flushAll(); // readers see the stream time writers persist at their checkpoints
                await check(i, o, await reader.get(k(o.key), o.t), await memory[partitionOf(o.key)].get(o.key, o.t));
              } else if (o.op === 'lookupHistory') {
                await flushAll();
                const range = { fromTime: o.from, toTime: o.to, order: o.order };
                await check(i, o, await reader.history(k(o.key), range), await memory[partitionOf(o.key)].history(o.key, range));
              } else {
                const p = partitionOf(o.key);
                await check(i, o, await apply(cass[p], { ...o, key: k(o.key) }), await apply(memory[p], o));
              }
            }
            await flushAll();
            for (const key of ['a', 'b', 'c', 'd']) {
              const m = memory[partitionOf(key)];
              expect(await reader.history(k(key))).toEqual(await m.history(key));
              for (let t = 0; t <= 40; t += 3) {
                expect(await reader.get(k(key), t)).toEqual(await m.get(key, t));
                expect(await reader.history(k(key), { fromTime: Math.max(0, t - 5), toTime: t })).toEqual(
                  await m.history(key, { fromTime: Math.max(0, t - 5), toTime: t }),
                );
              }
            }
          } finally {
            await Promise.all(cass.map((c) => c.close()));
          }
        }),
        { numRuns: 20 },
      );
    });
  }
});
