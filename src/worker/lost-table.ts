import type { CatalogView } from '../generations';
import { AdjunctError, describeError } from '../errors';
import { Logger } from '../observability/logger';
import type { PipelineTask } from '../sink/pipeline-task';

/** How long a missing current table must stay missing before it counts as lost (a table another worker is creating shows up well within it). */
export const LOST_TABLE_CONFIRM_MS = 5000;
/** A check that failed (no schema agreement, Cassandra unreachable) runs again after this long, without waiting for a write to report. */
export const LOST_TABLE_RECHECK_MS = 10_000;

/** What the lost-table check reads. */
export interface LostTableProbe {
  /** The pipeline's catalog row, read fresh. */
  view: () => Promise<CatalogView>;
  /** True when the table of a generation exists (after schema agreement). */
  tableExists: (generation: number) => Promise<boolean>;
  sleep: (ms: number) => Promise<void>;
}

/**
 * True when `generation` is still the store's `role` generation (current, or the one being built) and its table is
 * gone, and still gone `LOST_TABLE_CONFIRM_MS` later: dropped outside adjunct, not a retired generation (the catalog
 * has moved on) nor a table just created elsewhere and not visible here yet.
 */
export async function isTableLost(generation: number, role: 'current' | 'building', p: LostTableProbe): Promise<boolean> {
  const still = async () => (await p.view())[role] === generation;
  if (!(await still()) || (await p.tableExists(generation))) return false;
  await p.sleep(LOST_TABLE_CONFIRM_MS);
  return (await still()) && !(await p.tableExists(generation));
}

/** What a runner lends its lost-table watch. */
export interface LostTableWatchParts extends LostTableProbe {
  /** Runs a task swap exclusively (the runner's one-at-a-time queue). */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Brings the runner's tasks in line with the catalog (a retired generation moves the main task on). */
  converge: () => Promise<void>;
  /** The main task and the generation it writes, unless stopped. */
  main: () => { generation: number; task: PipelineTask } | undefined;
  /** The build task and the generation it builds, if a reload is building here. */
  build: () => { generation: number; task: PipelineTask } | undefined;
  /** Replaces the build of a generation whose table was lost with a build of a new number. */
  replaceBuild: (lost: number) => Promise<void>;
  /** Starts (or joins) building a new generation from the earliest offsets. */
  rebuild: () => Promise<void>;
  /** The rebuild could not begin: the pipeline fails (RELOAD_FAILED), as other failed reloads do, rather than stay stopped. */
  fatal: (e: AdjunctError) => void;
  shutdownTimeoutMs: number;
  log: Logger;
  store: string;
}

/**
 * Acts on writers that found their table missing. A retired generation: following the catalog moves the task on. The
 * table of the generation being built dropped outside adjunct: the build is replaced by a build of a new number (its
 * rows are gone; its group's offsets would skip them). The current generation's table dropped (`isTableLost`): the
 * main task stops (its writes cannot land, and would hold the write budget) and the store is rebuilt as a new
 * generation from the earliest offsets, which readers switch to once READY; until then reads of the store fail rather
 * than answer from a partial table.
 */
export class LostTableWatch {
  private checking?: Promise<void>;
  private recheck?: NodeJS.Timeout;
  private closed = false;
  /** The generation whose table was found lost (its task stopped, the store being rebuilt). */
  private lostGeneration?: number;

  constructor(private readonly p: LostTableWatchParts) {}

  /** True while `generation` is the one whose table was lost: not ready until the rebuilt generation takes over. */
  isLost(generation: number): boolean {
    return this.lostGeneration === generation;
  }

  /** A writer found its table missing (one check at a time: every write in flight reports the same table). */
  report(): void {
    if (this.checking || this.closed) return;
    clearTimeout(this.recheck);
    this.checking = this.p
      .exclusive(() => this.check())
      .catch((e) => {
        // Writes report only on their first failed attempt: the watch re-arms itself rather than wait for a new write.
        this.p.log.warn({ err: describeError(e), retryInMs: LOST_TABLE_RECHECK_MS }, 'checking a missing table failed; checking again');
        if (!this.closed) this.recheck = setTimeout(() => this.report(), LOST_TABLE_RECHECK_MS).unref();
      })
      .finally(() => (this.checking = undefined));
  }

  /** Stops re-checking (the runner stops). */
  close(): void {
    this.closed = true;
    clearTimeout(this.recheck);
  }

  private async check(): Promise<void> {
    if (!this.p.main() && !this.p.build()) return;
    await this.p.converge();
    const build = this.p.build();
    if (build && (await isTableLost(build.generation, 'building', this.p))) {
      if (this.p.build()?.task !== build.task) return;
      await this.p.replaceBuild(build.generation);
    }
    const main = this.p.main();
    if (!main || !(await isTableLost(main.generation, 'current', this.p))) return;
    // Stopped, or moved to another generation, during the confirmation: nothing to rebuild here.
    if (this.p.main()?.task !== main.task) return;
    this.p.log.error(
      { generation: main.generation, store: this.p.store },
      "STORE TABLE LOST: the current generation's table was dropped outside adjunct; its task stops and the store is rebuilt as a new generation from the earliest offsets (reads fail until it is READY)",
    );
    this.lostGeneration = main.generation;
    await main.task.stop(this.p.shutdownTimeoutMs);
    try {
      await this.p.rebuild();
    } catch (e) {
      this.p.fatal(
        new AdjunctError(`rebuilding store ${this.p.store} after its table was lost failed: ${describeError(e)}`, {
          code: 'RELOAD_FAILED',
          stage: 'bootstrap',
          cause: e,
        }),
      );
    }
  }
}
