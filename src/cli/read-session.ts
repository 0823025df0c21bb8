import { loadReadConfigFile, ReadConfig } from '../config';
import type { Lookup } from '../lookup';

/** Opens a Lookup from a config's cassandra section for the span of fn (UNAVAILABLE when Cassandra cannot be reached). */
export async function withLookup<T>(configFile: string, fn: (l: Lookup, cfg: { config: ReadConfig }) => Promise<T>): Promise<T> {
  const loaded = loadReadConfigFile(configFile);
  const { createCassandra } = await import('../worker/clients');
  const { openLookup } = await import('../lookup');
  const cfg = loaded.config.cassandra;
  const client = createCassandra(cfg);
  try {
    const lookup = await openLookup({ client, keyspace: cfg.keyspace, readConsistency: cfg.readConsistency });
    return await fn(lookup, loaded);
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}
