import { AdjunctError } from '../errors';
import { stillWritten } from './follow-plan';
import type { StoreEntry } from './store-catalog';
import type { LiveWriter, WriterRole } from './worker-registry';

/** The catalog operations of the drop protocol (StoreCatalog; a fake in unit tests). */
export interface DropCatalog {
  get(store: string): Promise<StoreEntry | null>;
  markDropping(store: string, generation: number): Promise<boolean>;
  finishDrop(store: string, generation: number): Promise<void>;
}

/** The heartbeat rows of the drop protocol (WorkerRegistry; a fake in unit tests). */
export interface WriterDirectory {
  beat(w: Omit<LiveWriter, 'updatedAt'>, ttlSeconds: number): Promise<void>;
  forget(pipeline: string, worker: string, generation: number): Promise<void>;
  live(pipeline: string): Promise<LiveWriter[]>;
}

/** One worker's claim to write one generation of one pipeline's store. */
export interface WriterClaim {
  pipeline: string;
  store: string;
  worker: string;
  generation: number;
  role: WriterRole;
}

/** True when a worker may (still) write `generation`: it is current, being built, or the kept previous one. */
export function mayWrite(
  entry: Pick<StoreEntry, 'currentGeneration' | 'buildingGeneration' | 'previousGeneration'>,
  generation: number,
): boolean {
  return generation === entry.currentGeneration || generation === entry.buildingGeneration || generation === entry.previousGeneration;
}

/**
 * Dropping a generation's table with no live writer, in the order that makes the check atomic (a Dekker handshake over
 * the catalog row and the heartbeat rows):
 * - a writer first writes its heartbeat row, then reads the catalog row, and writes only if the generation is still
 *   current, building or previous (`register`, before its first write and at every heartbeat);
 * - the janitor first moves the expired previous generation to `dropping` with a compare-and-set, then reads the
 *   heartbeat rows, and drops only if none names it (`pass`).
 * All at LOCAL_QUORUM (the compare-and-set commits at LOCAL_QUORUM before it returns). If the writer's read misses the
 * mark, it started before the compare-and-set returned, so the writer's heartbeat was written before the janitor's
 * heartbeat read started, which then sees it: no drop. Otherwise the writer sees the generation retired and never
 * writes. A marked generation never comes back: rollback needs it as previous, and generation numbers are never reused.
 */
export class GenerationDrop {
  constructor(
    private readonly catalog: DropCatalog,
    private readonly writers: WriterDirectory,
    private readonly ttlSeconds: number,
  ) {}

  /**
   * Registers (or refreshes) a writer's heartbeat, then re-reads the catalog row to check that the generation may still
   * be written; otherwise throws GENERATION_RETIRED. The row stays: it keeps the table while a running task drains; a
   * worker that has not written yet forgets it at once, one whose task stops forgets it after the stop.
   */
  async register(c: WriterClaim): Promise<void> {
    await this.writers.beat({ pipeline: c.pipeline, worker: c.worker, generation: c.generation, role: c.role }, this.ttlSeconds);
    const entry = await this.catalog.get(c.store);
    if (entry && mayWrite(entry, c.generation)) return;
    throw new AdjunctError(
      `generation ${c.generation} of store ${c.store} may no longer be written (${entry?.droppingGeneration === c.generation ? 'being dropped' : 'neither current, building nor previous'})`,
      { code: 'GENERATION_RETIRED', stage: 'store', context: { store: c.store, generation: c.generation } },
    );
  }

  /**
   * One janitor pass: marks the previous generation `dropping` once its keep time passed (or resumes a drop already
   * marked), and drops its table only when no heartbeat row names it; the writers see the mark at their next heartbeat
   * and stop, so a later pass drops. Returns the dropped generation, or null.
   */
  async pass(pipeline: string, store: string, now: Date, dropTable: (generation: number) => Promise<void>): Promise<number | null> {
    const entry = await this.catalog.get(store);
    if (!entry) return null;
    let generation = entry.droppingGeneration;
    if (generation === null) {
      const expired = entry.previousGeneration !== null && entry.previousDropAfter !== null && entry.previousDropAfter <= now;
      if (!expired || !(await this.catalog.markDropping(store, entry.previousGeneration!))) return null;
      generation = entry.previousGeneration!;
    }
    const g = generation;
    if (stillWritten(g, await this.writers.live(pipeline))) return null;
    await dropTable(g);
    await this.catalog.finishDrop(store, g);
    return g;
  }
}
