import fc from 'fast-check';
import { CassandraVersionedStore } from '../../../src/store/cassandra/cassandra-versioned-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { MemoryVersionedStore } from '../../../src/store/memory/memory-versioned-store';
import { StoreScope, VersionedKeyValueStore } from '../../../src/store/types';
import { isolatedStore, useStoreKeyspace } from './support';

jest.setTimeout(300_000);

type Op =
  | { op: 'put'; key: string; value: string | null; t: number }
  | { op: 'delete'; key: string; t: number }
  | { op: 'get'; key: string }
  | { op: 'asOf'; key: string; t: number }
  | { op: 'history'; key: string; from?: number; to?: number; order: 'asc' | 'desc' }
  | { op: 'restart' };

const key = fc.constantFrom('a', 'b', 'c');
const time = fc.integer({ min: 0, max: 40 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('put' as const), key, value: fc.option(fc.constantFrom('x', 'y', 'z'), { freq: 4 }), t: time }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key, t: time }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), key }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('asOf' as const), key, t: time }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { op: fc.constant('history' as const), key, from: time, to: time, order: fc.constantFrom('asc' as const, 'desc' as const) },
      { requiredKeys: ['op', 'key', 'order'] },
    ),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
);

const ks = useStoreKeyspace('it_store_prop');
let counter = 0;

async function apply(s: VersionedKeyValueStore<string, string>, o: Exclude<Op, { op: 'restart' }>): Promise<unknown> {
  switch (o.op) {
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

for (const scope of ['partitioned', 'global'] as StoreScope[]) {
  it(`Cassandra ${scope} versioned store answers exactly like the memory store`, async () => {
    const retention = 8;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 10, maxLength: 30 }), async (ops) => {
        const n = ++counter;
        const open = (): Promise<CassandraVersionedStore<string, string>> =>
          openCassandraVersionedStore({
            client: ks.client,
            keyspace: ks.keyspace,
            storeName: `prop-${scope}`,
            ...isolatedStore(scope, n, 'r'),
            historyRetentionMs: retention,
            cleanupEvery: 2,
          });
        const memory = new MemoryVersionedStore<string, string>({ historyRetentionMs: retention });
        let cass = await open();
        try {
          for (const [i, o] of ops.entries()) {
            if (o.op === 'restart') {
              await cass.close();
              cass = await open();
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
