import { Client } from 'cassandra-driver';
import { openCassandraKeyValueStore } from '../../../src/store/cassandra/open-kv-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { stringSerde } from '../../../src/store/serde';
import { StoreScope } from '../../../src/store/types';
import { kvStoreContract } from '../../store/contract/kv-contract';
import { versionedStoreContract } from '../../store/contract/versioned-contract';
import { newCassandraClient, uniqueName } from '../helpers';
import { namespacedStringSerde } from './support';

jest.setTimeout(120_000);

const keyspace = uniqueName('it_store_contract');
let client: Client;
let counter = 0;

beforeAll(async () => {
  client = await newCassandraClient();
});
afterAll(async () => {
  await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
  await client.shutdown();
});

for (const scope of ['partitioned', 'global'] as StoreScope[]) {
  const storeName = `versioned-${scope}`;
  versionedStoreContract(`CassandraVersionedStore (${scope})`, async ({ historyRetentionMs }) => {
    const n = ++counter;
    const open = () =>
      openCassandraVersionedStore<string, string>({
        client,
        keyspace,
        storeName,
        scope,
        partition: scope === 'partitioned' ? n : undefined,
        writerId: `w${n}`,
        historyRetentionMs,
        keySerde: namespacedStringSerde(`t${n}`),
        valueSerde: stringSerde,
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
  });

  kvStoreContract(`CassandraKeyValueStore (${scope})`, async (keySerde) => {
    const n = ++counter;
    return openCassandraKeyValueStore({
      client,
      keyspace,
      // Global stores read every bucket, so each test gets its own table; partitioned ones their own partition.
      storeName: scope === 'global' ? `kv-global-${n}` : 'kv-partitioned',
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
