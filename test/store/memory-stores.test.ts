import { MemoryKeyValueStore } from '../../src/store/memory/memory-kv-store';
import { MemoryVersionedStore } from '../../src/store/memory/memory-versioned-store';
import { kvStoreContract } from './contract/kv-contract';
import { versionedStoreContract, VersionedStoreFactory } from './contract/versioned-contract';
import { versionedKafkaCases } from './contract/versioned-kafka-cases';

const memoryVersioned: VersionedStoreFactory = async ({ historyRetentionMs }) => {
  const store = new MemoryVersionedStore<string, string>({ historyRetentionMs });
  return { store, reopen: async () => store };
};
versionedStoreContract('MemoryVersionedStore', memoryVersioned);
versionedKafkaCases('MemoryVersionedStore', memoryVersioned);

kvStoreContract('MemoryKeyValueStore', async (keySerde) => new MemoryKeyValueStore({ keySerde }));
