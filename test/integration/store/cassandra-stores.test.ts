import { openCassandraKeyValueStore } from '../../../src/store/cassandra/open-kv-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { stringSerde } from '../../../src/store/serde';
import { StoreScope } from '../../../src/store/types';
import { kvStoreContract } from '../../store/contract/kv-contract';
import { versionedStoreContract, VersionedStoreFactory } from '../../store/contract/versioned-contract';
import { versionedKafkaCases } from '../../store/contract/versioned-kafka-cases';
import { isolatedStore, useStoreKeyspace } from './support';

jest.setTimeout(120_000);

const ks = useStoreKeyspace('it_store_contract');
let counter = 0;

for (const scope of ['partitioned', 'global'] as StoreScope[]) {
  const storeName = `versioned-${scope}`;
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
  versionedStoreContract(`CassandraVersionedStore (${scope})`, factory);
  versionedKafkaCases(`CassandraVersionedStore (${scope})`, factory);

  kvStoreContract(`CassandraKeyValueStore (${scope})`, async (keySerde) => {
    const n = ++counter;
    return openCassandraKeyValueStore({
      client: ks.client,
      keyspace: ks.keyspace,
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
