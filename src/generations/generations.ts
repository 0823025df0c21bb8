import { Client } from 'cassandra-driver';
import { AdjunctError } from '../errors';
import { CatalogView, heartbeatTtlSeconds, stillWritten } from './follow-plan';
import { PipelineControl } from './pipeline-control';
import { StoreCatalog, StoreEntry } from './store-catalog';
import { LiveWriter, WorkerRegistry, WriterRole } from './worker-registry';

/**
 * The generations of one pipeline's store, as every process sees them in the catalog: begin a build, switch to it,
 * roll back to a named generation, pause/resume, heartbeat what this worker writes, and expire/drop the previous
 * generation once its keep time passed and no live worker writes it.
 */
export class Generations {
  readonly catalog: StoreCatalog;
  readonly registry: WorkerRegistry;
  readonly control: PipelineControl;

  constructor(
    client: Client,
    keyspace: string,
    private readonly pollMs: number,
  ) {
    this.catalog = new StoreCatalog(client, keyspace);
    this.registry = new WorkerRegistry(client, keyspace);
    this.control = new PipelineControl(client, keyspace);
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

  /** Records that `worker` writes `generation`, valid for three polls. */
  beat(pipeline: string, worker: string, generation: number, role: WriterRole): Promise<void> {
    return this.registry.beat({ pipeline, worker, generation, role }, heartbeatTtlSeconds(this.pollMs));
  }

  /** Forgets that `worker` writes `generation`. */
  forget(pipeline: string, worker: string, generation: number): Promise<void> {
    return this.registry.forget(pipeline, worker, generation);
  }

  /** Live writers of a pipeline. */
  writers(pipeline: string): Promise<LiveWriter[]> {
    return this.registry.live(pipeline);
  }

  /** Expires the previous generation when its keep time passed and no live worker writes it; returns it for dropping. */
  expire(pipeline: string, store: string, now: Date): Promise<number | null> {
    return this.catalog.expirePrevious(store, now, async (g) => stillWritten(g, await this.registry.live(pipeline)));
  }
}
