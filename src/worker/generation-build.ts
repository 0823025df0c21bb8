import type { Generations, ReadyTracker } from '../generations';
import { describeError, isAdjunctError } from '../errors';
import { Logger } from '../observability/logger';
import type { PipelineTask } from '../sink/pipeline-task';

/** A build of the store's next generation running on this worker: its task and its READY tracker. */
export interface BuildingGeneration {
  generation: number;
  /** Replaced in place when the task restarts (a re-subscription, a stuck consumer). */
  task: PipelineTask;
  tracker: ReadyTracker;
}

/** What a runner lends the build of its next generation. */
export interface GenerationBuildParts {
  store: string;
  generations: Pick<Generations, 'begin' | 'replaceBuild' | 'switchTo'>;
  /** Starts a build's tracker and task (`GenerationTasks.startBuild`); a start that fails stops what it began. */
  startBuild: (generation: number, paused: boolean) => Promise<{ task: PipelineTask; tracker: ReadyTracker }>;
  /** Records that this worker writes `generation` in the given role (the writers' heartbeat). */
  writes: (generation: number, role: 'building') => Promise<void>;
  /** This worker no longer writes `generation`, unless a task of it still does. */
  forget: (generation: number) => Promise<void>;
  /** True when the table of a generation exists (after schema agreement). */
  tableExists: (generation: number) => Promise<boolean>;
  /** How long the generation a switch retires is kept (ms). */
  keepPreviousGeneration: number;
  /** The generation the main task writes. */
  current: () => number;
  paused: () => boolean;
  stopped: () => boolean;
  /** Runs a task swap exclusively (the runner's one-at-a-time queue). */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The built generation is current: its task becomes the main one and the old main task stops. */
  promote: (build: BuildingGeneration) => Promise<void>;
  /** Brings the runner's tasks in line with the catalog as it is now (`CatalogFollower.converge`; call exclusively). */
  follow: () => Promise<void>;
  /** Waits before another switch attempt (the runner's clock). */
  sleep: (ms: number) => Promise<void>;
  /** The reload failed (after its start) in a way no retry fixes: the pipeline fails with RELOAD_FAILED. */
  fail: (e: unknown) => void;
  shutdownTimeoutMs: number;
  log: Logger;
}

/** Longest wait between two attempts of a switch that failed transiently. */
export const SWITCH_RETRY_MAX_MS = 30_000;

/** A switch backoff is waited in slices of at most this, so a stop ends it (and lets the process exit) within one. */
const BACKOFF_SLICE_MS = 5_000;

/**
 * The reload lifecycle of one pipeline on one worker: begin a generation in the catalog → join its build (a task
 * under the generation's own consumer group, from the earliest offsets) → when READY, check its table and switch the
 * store to it (one compare-and-set; whichever worker sees READY first) → promote the build to the main task. A build
 * whose table was lost is replaced by a build of a new number. At most one build runs here at a time.
 */
export class GenerationBuild {
  private running?: BuildingGeneration;

  constructor(private readonly p: GenerationBuildParts) {}

  /** The build running here, if any. */
  get active(): BuildingGeneration | undefined {
    return this.running;
  }

  /**
   * At start: begins a build only when one is asked for (`begin`: resetOffset, offsets lost). A build the catalog named
   * when this worker read it is joined only if the catalog still names it now (`follow`): one switched to or cancelled
   * since (the consumer-group join takes seconds) is followed, never begun anew. Call exclusively.
   */
  async atStart(begin: boolean, sawBuilding: boolean): Promise<void> {
    if (begin) {
      await this.begin();
      return;
    }
    if (!sawBuilding) return;
    await this.p.follow().catch((e: unknown) => {
      // Joining is retried by the next catalog poll, as after a failed join.
      if (!(isAdjunctError(e) && e.retriable)) throw e;
      this.p.log.warn({ err: describeError(e) }, 'following the build in progress failed; the next catalog poll joins it');
    });
  }

  /** Begins a new generation in the catalog (or returns the one building here) and joins its build. */
  async begin(): Promise<number> {
    if (this.running) return this.running.generation;
    const generation = await this.p.generations.begin(this.p.store);
    this.p.log.warn(
      { generation, current: this.p.current() },
      'reload: building a new generation from the earliest offset; readers stay on the current one; every worker joins at its next catalog poll',
    );
    try {
      return await this.join(generation);
    } catch (e) {
      // The build is begun in the catalog: a passing failure to join it here (Kafka, schema agreement) is retried by the next poll.
      if (!(isAdjunctError(e) && e.retriable)) throw e;
      this.p.log.warn({ generation, err: describeError(e) }, 'joining the build failed; the next catalog poll joins it again');
      return generation;
    }
  }

  /** Builds `generation` under its own consumer group beside the main task; whoever sees it READY first switches. */
  async join(generation: number): Promise<number> {
    if (this.running) return this.running.generation;
    await this.p.writes(generation, 'building');
    // A build that fails to start leaves nothing behind (its heartbeat included): the next catalog poll joins it again.
    const { task, tracker } = await this.p.startBuild(generation, this.p.paused()).catch(async (e: unknown) => {
      await this.p
        .forget(generation)
        .catch((f: unknown) =>
          this.p.log.warn(
            { generation, err: describeError(f) },
            "the failed build's heartbeat could not be removed; it expires on its own",
          ),
        );
      throw e;
    });
    this.running = { generation, task, tracker };
    void tracker.ready.then(() => this.p.exclusive(() => this.switchTo(generation, 1))).catch((e) => this.p.fail(e));
    return generation;
  }

  /** The build of `lost` lost its table (`why`): it stops here and is replaced by a build of a new number (one CAS in the catalog). */
  async replaceLost(lost: number, why: string): Promise<void> {
    this.p.log.error(
      { generation: lost, store: this.p.store },
      `BUILD TABLE LOST: ${why}; the build restarts as a new generation from the earliest offsets (readers stay on the current one)`,
    );
    if (this.running?.generation === lost) await this.stop();
    const next = await this.p.generations.replaceBuild(this.p.store, lost);
    if (next !== null) await this.join(next);
  }

  /** Stops the build running here (its task drains and commits); the catalog still has it begun. */
  async stop(): Promise<void> {
    const b = this.running;
    if (!b) return;
    this.running = undefined;
    await Promise.all([b.tracker.stop(), b.task.stop(this.p.shutdownTimeoutMs)]);
    await this.p.forget(b.generation);
  }

  /** The built generation became current (here or on another worker): the runner makes it the main task. */
  async promote(): Promise<void> {
    const b = this.running;
    if (!b) return;
    this.running = undefined;
    await this.p.promote(b);
  }

  /** The build is READY: its table is checked and the store switched to it (one CAS), then it is promoted. */
  private async switchTo(generation: number, attempt: number): Promise<void> {
    if (this.p.stopped() || this.running?.generation !== generation) return;
    // A switch never names a missing table (a READY build whose table creation failed, or one dropped before the switch);
    // a check that cannot be made (no schema agreement) switches as before, and says so.
    const exists = await this.p.tableExists(generation).catch((e: unknown) => {
      this.p.log.warn(
        { generation, err: describeError(e) },
        "the built generation's table could not be checked before the switch; switching",
      );
      return true;
    });
    if (!exists) return this.replaceLost(generation, 'the built generation has no table');
    let switched: { previous: number | null; applied: boolean };
    try {
      switched = await this.p.generations.switchTo(this.p.store, generation, this.p.keepPreviousGeneration);
    } catch (e) {
      return this.switchFailed(generation, attempt, e);
    }
    if (switched.applied)
      this.p.log.warn({ generation, previous: switched.previous }, 'reload complete: store switched to the new generation');
    await this.promote();
  }

  /**
   * The switch did not apply (SWITCH_CONFLICT: cancelled, rolled back, replaced) or failed transiently (its outcome
   * unknown after the catalog's own retries): the catalog decides. Following it promotes this build when anyone
   * switched to it, and stops it when it is no longer being built; a build still building here tries again after a
   * backoff. Only a failure no retry fixes fails the reload.
   */
  private async switchFailed(generation: number, attempt: number, e: unknown): Promise<void> {
    if (!(isAdjunctError(e) && e.retriable)) throw e;
    this.p.log.warn({ generation, err: describeError(e) }, 'the switch did not apply; following the catalog');
    await this.p.follow().catch((f: unknown) => {
      if (!(isAdjunctError(f) && f.retriable)) throw f;
      this.p.log.warn({ generation, err: describeError(f) }, 'following the catalog after the switch failed');
    });
    if (this.p.stopped() || this.running?.generation !== generation) return;
    const delay = Math.min(1000 * 2 ** (attempt - 1), SWITCH_RETRY_MAX_MS);
    void this.backoff(delay)
      .then(() => this.p.exclusive(() => this.switchTo(generation, attempt + 1)))
      .catch((f) => this.p.fail(f));
  }

  /** Waits `ms` (the runner's clock), ending early once the pipeline stops. */
  private async backoff(ms: number): Promise<void> {
    for (let left = ms; left > 0 && !this.p.stopped(); left -= BACKOFF_SLICE_MS) await this.p.sleep(Math.min(left, BACKOFF_SLICE_MS));
  }
}
