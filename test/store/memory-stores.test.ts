import { MemoryKeyValueStore } from '../../src/store/memory/memory-kv-store';
import { MemoryVersionedStore } from '../../src/store/memory/memory-versioned-store';
import { kvStoreContract } from './contract/kv-contract';
import { versionedStoreContract } from './contract/versioned-contract';

versionedStoreContract('MemoryVersionedStore', async ({ historyRetentionMs }) => {
  const store = new MemoryVersionedStore<string, string>({ historyRetentionMs });
  return { store, reopen: async () => store };
});

kvStoreContract('MemoryKeyValueStore', async (keySerde) => new MemoryKeyValueStore({ keySerde }));
