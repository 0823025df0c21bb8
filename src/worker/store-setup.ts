import type { Client } from 'cassandra-driver';
import type { AdjunctConfig, PipelineSpec } from '../config/schema';
import { storeTableCollisions } from '../config/cross-check';
import { ensureCatalog } from '../catalog';
import { ConfigError } from '../errors';
import { Generations, generationTable, StoreEntry, TableOwner, TableOwners } from '../generations';
import { explicitKeyColumns, explicitTypedColumns, renderTableOptions, TableOptions, tableNameForStore } from '../store/cassandra';
import { createCassandra } from './clients';
import { ensureKeyspaceFor, StoreWiring } from './store-wiring';

/** Every identifier and table option is validated before any CQL is built or sent (also for configs built in code). */
export function validateBeforeAnyCql(cfg: AdjunctConfig): void {
  for (const spec of cfg.pipelines) {
    renderTableOptions(spec.store.tableOptions as TableOptions | undefined, spec.store.ttlSeconds);
    tableNameForStore(spec.store.name);
    if (spec.store.columns) explicitTypedColumns(spec.store.columns);
    if (spec.store.keyColumns) explicitKeyColumns(spec.store.keyColumns, spec.extract.key?.fields);
  }
  const collisions = storeTableCollisions(cfg.pipelines);
  if (collisions.length)
    throw new ConfigError(collisions.map((c) => `pipelines[${c.path[1]}].store.name: ${c.message}`).join('\n'), {
      context: { problems: collisions },
    });
}

/** What a pipeline's store needs from the catalog before its table can be prepared. */
export interface StoreCatalogParts {
  generations: Generations;
  owners: TableOwners;
}

/**
 * Makes a connected client's keyspace (when cassandra.autoCreate allows) and catalog ready, and returns the catalog
 * parts every store's preparation uses: the one start-up sequence of a worker and of `adjunct schema`.
 */
export async function prepareCatalog(client: Client, config: AdjunctConfig): Promise<StoreCatalogParts> {
  const keyspace = config.cassandra.keyspace;
  await ensureKeyspaceFor(client, config.cassandra);
  await ensureCatalog(client, keyspace);
  return { generations: new Generations(client, keyspace, config.worker.generationPoll), owners: new TableOwners(client, keyspace) };
}

/** A store ready for writes: its catalog entry and the owner its base table is claimed for. */
export interface PreparedStore {
  entry: StoreEntry;
  owner: TableOwner;
  /** The current generation's table of a known store is gone (dropped outside adjunct): not re-created, rebuilt by a worker. */
  currentTableLost: boolean;
}

/**
 * Makes a pipeline's store ready for writes, in the order that keeps stores apart: claims its base table for the
 * pipeline's worker group (LWT; a colliding store fails here with TABLE_OWNED, before any catalog entry is written),
 * registers its catalog entry, and creates the current generation's table (and the stream-time table) for a new store.
 */
export async function prepareStore(
  wiring: StoreWiring,
  spec: PipelineSpec,
  groupId: string,
  parts: StoreCatalogParts,
  workerId: string,
): Promise<PreparedStore> {
  const owner = { store: spec.store.name, pipeline: spec.name, groupId };
  const catalog = parts.generations.catalog;
  const existing = await catalog.get(spec.store.name);
  if (existing) wiring.adoptBaseTable(existing.baseTable);
  await parts.owners.claim(wiring.baseTable, owner, workerId);
  const entry = await catalog.register(wiring.catalogEntry());
  wiring.adoptBuckets(entry.buckets);
  // A known store whose current table is gone was dropped outside adjunct: it is not re-created empty under the
  // committed offsets (readers would take a partial store for a whole one); its writers find it missing and the
  // runner rebuilds it as a new generation (PipelineRunner.tableMissing).
  const currentTableLost = existing !== null && !(await wiring.tableExists(entry.currentGeneration));
  if (!currentTableLost) await wiring.ensureTable(entry.currentGeneration);
  return { entry, owner, currentTableLost };
}

/** One store whose schema `applySchema` made ready. */
export interface AppliedStore {
  pipeline: string;
  store: string;
  /** Table of one generation: the current one, and the one a reload is building, if any. */
  table: string;
  generation: number;
  /**
   * `ready`; `lost`: the current table of a known store is gone and is left to a worker to rebuild (never re-created
   * empty); `pending`: the table of a build in progress does not exist, and is left to the worker that joins the build
   * (it creates it only if the build has committed nothing yet, else replaces the build).
   */
  state: 'ready' | 'lost' | 'pending';
}

/**
 * Applies a config's Cassandra schema, as a starting worker would, and returns: the keyspace (when cassandra.autoCreate
 * allows), the catalog tables, and each pipeline's base-table claim, catalog entry and generation tables (current, and
 * the one a reload is building). For schema changes made ahead of a deployment; connects only Cassandra.
 */
export async function applySchema(config: AdjunctConfig, workerId: string): Promise<{ keyspace: string; stores: AppliedStore[] }> {
  validateBeforeAnyCql(config);
  const client = createCassandra(config.cassandra);
  try {
    await client.connect();
    const parts = await prepareCatalog(client, config);
    const stores: AppliedStore[] = [];
    for (const spec of config.pipelines) {
      const wiring = new StoreWiring(client, config.cassandra, spec);
      const { entry, currentTableLost } = await prepareStore(wiring, spec, config.worker.groupId, parts, workerId);
      const add = (generation: number, state: AppliedStore['state']) =>
        stores.push({
          pipeline: spec.name,
          store: spec.store.name,
          table: generationTable(wiring.baseTable, generation),
          generation,
          state,
        });
      add(entry.currentGeneration, currentTableLost ? 'lost' : 'ready');
      // A reload in progress (`adjunct reload --catalog`): its table is the build's to create (only while its group has
      // committed nothing: one dropped mid-build must not come back empty under the group's offsets).
      const building = entry.buildingGeneration;
      if (building !== null && building !== entry.currentGeneration)
        add(building, (await wiring.tableExists(building)) ? 'ready' : 'pending');
    }
    return { keyspace: config.cassandra.keyspace, stores };
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}
