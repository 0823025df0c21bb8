import { openCassandraKeyValueStore } from '../../../src/store/cassandra/open-kv-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { stringSerde } from '../../../src/store/serde';
import { StoreScope } from '../../../src/store/types';
import { kvStoreContract } from '../../store/contract/kv-contract';
import { versionedStoreContract, VersionedStoreFactory } from '../../store/contract/versioned-contract';
import { versionedKafkaCases } from '../../store/contract/versioned-kafka-cases';
import { createUnbucketedTable, isolatedStore, partitionKeyOf, useStoreKeyspace } from './support';

jest.setTimeout(120_000);

const ks = useStoreKeyspace('it_store_contract');
let counter = 0;

/** The layouts under test: bucketed partitioned tables (the default), partitioned tables from before buckets, global tables. */
const layouts: { name: string; scope: StoreScope; unbucketed?: boolean; edges?: boolean }[] = [
  { name: 'partitioned', scope: 'partitioned' },
  { name: 'partitioned, unbucketed table from before buckets', scope: 'partitioned', unbucketed: true },
  { name: 'global', scope: 'global' },
  { name: 'global, edge layout', scope: 'global', edges: true },
];

beforeAll(async () => {
  await createUnbucketedTable(ks.client, ks.keyspace, 'versioned_unbucketed', 'versioned');
  await createUnbucketedTable(ks.client, ks.keyspace, 'kv_unbucketed', 'kv');
});

for (const { name, scope, unbucketed, edges } of layouts) {
  const storeName = unbucketed ? 'versioned-unbucketed' : edges ? 'versioned-edges' : `versioned-${scope}`;
  const factory: VersionedStoreFactory = async ({ historyRetentionMs }) => {
    const n = ++counter;
    const open = () =>
      openCassandraVersionedStore<string, string>({
        client: ks.client,
        keyspace: ks.keyspace,
        storeName,
        ...isolatedStore(scope, n, 't'),
        historyRetentionMs,
        valueSerde: stringSerde,
        layout: edges ? 'edges' : undefined,
      });
    let store = await open();
    return {
      store,
      reopen: async () => {
        await store.close();
        store = await open();
        return store;
      },
    };
  };
  versionedStoreContract(`CassandraVersionedStore (${name})`, factory);
  versionedKafkaCases(`CassandraVersionedStore (${name})`, factory);

  if (edges) continue;
  kvStoreContract(`CassandraKeyValueStore (${name})`, async (keySerde) => {
    const n = ++counter;
    return openCassandraKeyValueStore({
      client: ks.client,
      keyspace: ks.keyspace,
      // Global stores read every bucket, so each test gets its own table; partitioned ones their own partition.
      storeName: scope === 'global' ? `kv-global-${n}` : unbucketed ? 'kv-unbucketed' : 'kv-partitioned',
      scope,
      partition: scope === 'partitioned' ? n : undefined,
      buckets: 8,
      fetchSize: 37,
      allowCount: true,
      keySerde,
      valueSerde: stringSerde,
    });
  });
}

it('new partitioned tables are bucketed; an existing unbucketed table keeps its layout', async () => {
  expect(await partitionKeyOf(ks.client, ks.keyspace, 'versioned_partitioned')).toEqual(['partition', 'bucket']);
  expect(await partitionKeyOf(ks.client, ks.keyspace, 'kv_partitioned')).toEqual(['partition', 'bucket']);
  expect(await partitionKeyOf(ks.client, ks.keyspace, 'versioned_unbucketed')).toEqual(['partition']);
  expect(await partitionKeyOf(ks.client, ks.keyspace, 'kv_unbucketed')).toEqual(['partition']);
  const rs = await ks.client.execute(`SELECT COUNT(*) AS n FROM ${ks.keyspace}.versioned_unbucketed`);
  expect(Number(rs.first().get('n'))).toBeGreaterThan(0); // the contract suites wrote into it
});

it('a versioned store refuses operations called while its close waits, after waiting for those called before it', async () => {
  const s = await openCassandraVersionedStore<string, string>({
    client: ks.client,
    keyspace: ks.keyspace,
    storeName: 'versioned-global',
    ...isolatedStore('global', ++counter, 't'),
    historyRetentionMs: 60_000,
    valueSerde: stringSerde,
  });
  expect(await s.put('a', 'v3', 30)).toBe(-1);
  void s.get('a', 15);
  // A late put on the rows layout reads its validTo: it waits behind the get, so it is sent after close() is called.
  const late = s.put('a', 'v1', 10);
  const closing = s.close();
  await expect(s.put('a', 'v2', 20)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  await expect(s.get('a')).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  await closing;
  expect(await late).toBe(30);
  await expect(s.flush()).rejects.toMatchObject({ code: 'STORE_CLOSED' });
});
