import { Client } from 'cassandra-driver';
import { AdjunctError } from '../errors';
import { CatalogView, heartbeatTtlSeconds } from './follow-plan';
import { GenerationDrop, WriterClaim } from './generation-drop';
import { PipelineControl } from './pipeline-control';
import { StoreCatalog, StoreEntry } from './store-catalog';
import { LiveWriter, WorkerRegistry } from './worker-registry';

/**
 * The generations of one pipeline's store, as every process sees them in the catalog: begin a build, switch to it,
 * roll back to a named generation, pause/resume, register what this worker writes, and drop the previous generation
 * once its keep time passed and no live worker writes it.
 */
export class Generations {
  readonly catalog: StoreCatalog;
  readonly registry: WorkerRegistry;
  readonly control: PipelineControl;
  private readonly drop: GenerationDrop;

  constructor(client: Client, keyspace: string, pollMs: number) {
    this.catalog = new StoreCatalog(client, keyspace);
    this.registry = new WorkerRegistry(client, keyspace);
    this.control = new PipelineControl(client, keyspace);
    this.drop = new GenerationDrop(this.catalog, this.registry, heartbeatTtlSeconds(pollMs));
  }

  /** The catalog's view of a pipeline's generations (one read of the store row, one of the pause flag). */
  async view(pipeline: string, store: string): Promise<CatalogView & { entry: StoreEntry }> {
    const [entry, paused] = await Promise.all([this.catalog.get(store), this.control.isPaused(pipeline)]);
    if (!entry) throw new AdjunctError(`unknown store ${store}`, { code: 'UNKNOWN_STORE', stage: 'store', context: { store } });
    return { current: entry.currentGeneration, building: entry.buildingGeneration, paused, entry };
  }

  /** Starts (or returns the already started) build of the next generation; every worker joins it at its next poll. */
  begin(store: string): Promise<number> {
    return this.catalog.beginBuild(store);
  }

  /** Replaces a build whose table was lost with a build of a new number (compare-and-set; see StoreCatalog.replaceBuild). */
  replaceBuild(store: string, lost: number): Promise<number | null> {
    return this.catalog.replaceBuild(store, lost);
  }

  /** Compare-and-set switch to a READY built generation (a no-op when another worker switched first). */
  switchTo(store: string, generation: number, keepMs: number): Promise<{ previous: number | null; applied: boolean }> {
    return this.catalog.switchTo(store, generation, keepMs);
  }

  /** Makes `to` current (idempotent). */
  rollbackTo(store: string, to: number, keepMs: number): Promise<{ current: number; previous: number | null; changed: boolean }> {
    return this.catalog.rollbackTo(store, to, keepMs);
  }

  /** Persists the pause flag every worker honours. */
  setPaused(pipeline: string, paused: boolean): Promise<void> {
    return this.control.setPaused(pipeline, paused);
  }

  /**
   * Records that a worker writes a generation (valid for three polls), then re-reads the catalog row:
   * throws GENERATION_RETIRED when the generation is being dropped or is no longer current, building or previous.
   */
  register(claim: WriterClaim): Promise<void> {
    return this.drop.register(claim);
  }

  /** Forgets that `worker` writes `generation`. */
  forget(pipeline: string, worker: string, generation: number): Promise<void> {
    return this.registry.forget(pipeline, worker, generation);
  }

  /** Live writers of a pipeline. */
  writers(pipeline: string): Promise<LiveWriter[]> {
    return this.registry.live(pipeline);
  }

  /**
   * Drops the previous generation's table once its keep time passed and no live worker writes it (marked `dropping`
   * first, so no worker starts writing it meanwhile); returns the dropped generation or null.
   */
  dropExpired(pipeline: string, store: string, now: Date, dropTable: (generation: number) => Promise<void>): Promise<number | null> {
    return this.drop.pass(pipeline, store, now, dropTable);
  }
}
