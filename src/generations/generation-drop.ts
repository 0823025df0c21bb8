import { AdjunctError } from '../errors';
import { stillWritten } from './follow-plan';
import type { StoreEntry } from './store-catalog';
import type { LiveWriter, WriterRole } from './worker-registry';

/** The catalog operations of the drop protocol (StoreCatalog; a fake in unit tests). */
export interface DropCatalog {
  get(store: string): Promise<StoreEntry | null>;
  markDropping(store: string, generation: number): Promise<boolean>;
  orphans(entry: StoreEntry): Promise<number[]>;
  markOrphanDropping(store: string, generation: number): Promise<boolean>;
  finishDrop(store: string, generation: number): Promise<void>;
}

/** How often a janitor looks for orphaned generation tables of a store (a read of system_schema). */
export const ORPHAN_SCAN_MS = 60_000;

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
 *   heartbeat rows, and drops only if none names it (`pass`). An orphaned generation (a table the row names nowhere: a
 *   previous one replaced by a second switch, a cancelled build) was retired by the compare-and-set that stopped naming
 *   it, which committed before the janitor read the row; it goes through the same `dropping` mark and heartbeat check.
 * All at LOCAL_QUORUM (the compare-and-set commits at LOCAL_QUORUM before it returns). If the writer's read misses the
 * mark, it started before the compare-and-set returned, so the writer's heartbeat was written before the janitor's
 * heartbeat read started, which then sees it: no drop. Otherwise the writer sees the generation retired and never
 * writes. A marked generation never comes back: rollback needs it as previous, and generation numbers are never reused.
 */
export class GenerationDrop {
  /** When each store's generation tables were last listed for orphans (ms since the epoch). */
  private readonly scanned = new Map<string, number>();

  constructor(
    private readonly catalog: DropCatalog,
    private readonly writers: WriterDirectory,
    private readonly ttlSeconds: number,
    private readonly orphanScanMs = ORPHAN_SCAN_MS,
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
   * One janitor pass: marks the previous generation `dropping` once its keep time passed, or else an orphaned one (a
   * table the row names nowhere: `DropCatalog.orphans`, looked for every `orphanScanMs`), or resumes a drop already
   * marked; drops its table only when no heartbeat row names it. Writers see the mark (or the generation retired) at
   * their next heartbeat and stop, so a later pass drops. Returns the dropped generation, or null.
   */
  async pass(pipeline: string, store: string, now: Date, dropTable: (generation: number) => Promise<void>): Promise<number | null> {
    const entry = await this.catalog.get(store);
    if (!entry) return null;
    const g = entry.droppingGeneration ?? (await this.mark(entry, now));
    if (g === null) return null;
    if (stillWritten(g, await this.writers.live(pipeline))) return null;
    await dropTable(g);
    await this.catalog.finishDrop(store, g);
    return g;
  }

  /** Marks the next generation to drop (the expired previous one, else the oldest orphan); null when none, or another janitor marked first. */
  private async mark(entry: StoreEntry, now: Date): Promise<number | null> {
    const previous = entry.previousGeneration;
    if (previous !== null && entry.previousDropAfter !== null && entry.previousDropAfter <= now) {
      return (await this.catalog.markDropping(entry.store, previous)) ? previous : null;
    }
    const last = this.scanned.get(entry.store);
    if (last !== undefined && now.getTime() - last < this.orphanScanMs) return null;
    this.scanned.set(entry.store, now.getTime());
    const [orphan] = await this.catalog.orphans(entry);
    if (orphan === undefined) return null;
    return (await this.catalog.markOrphanDropping(entry.store, orphan)) ? orphan : null;
  }
}
