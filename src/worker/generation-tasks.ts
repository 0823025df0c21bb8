import { AdjunctError, describeError, mayBeMissingTable } from '../errors';
import { PartitionWriterFactory } from '../sink/partition-writer';
import { Logger } from '../observability/logger';
import { PipelineParts } from '../sink/pipeline-parts';
import { PipelineTask } from '../sink/pipeline-task';
import { ReadyTracker } from '../generations';
import { PipelineRunnerDeps } from './runner-deps';
import { TopicSubscription } from './topic-subscription';

/** Builds the sink task and the bootstrap tracker of a table generation, and restarts a task in place. */
export class GenerationTasks {
  constructor(
    private readonly parts: PipelineParts,
    private readonly d: PipelineRunnerDeps,
    private readonly subscription: TopicSubscription,
    private readonly log: Logger,
    private readonly groupFor: (generation: number) => string,
    /** Starts a new generation (policy reload after lost offsets). */
    private readonly reload: () => Promise<number>,
    /** The progress watchdog found the task's consumer stuck: restart it in place (see `restart`). */
    private readonly restartStuck: (task: PipelineTask) => void,
    /** A writer could not open because its table may be gone (the runner checks, and rebuilds a lost current table). */
    private readonly tableMissing: () => void,
  ) {}

  /** Writers into `generation`, reporting an opening that failed on a table that may be gone. */
  private writers(generation: number): PartitionWriterFactory {
    // Writers never create their table (the start creates a new store's, a build its own before it writes): one dropped
    // outside adjunct and re-created empty under the committed offsets would serve a partial store as if whole.
    const factory = this.d.writersFor(generation);
    return {
      open: (topic, partition) =>
        factory.open(topic, partition).catch((e: unknown) => {
          if (mayBeMissingTable(e)) this.tableMissing();
          throw e;
        }),
    };
  }

  private get name(): string {
    return this.d.spec.name;
  }

  /** A new (not started) task writing `generation` under its consumer group (from positions decided at start, if any). */
  task(generation: number, startAt?: ReadonlyMap<string, bigint>): PipelineTask {
    const task: PipelineTask = new PipelineTask(this.parts, {
      generation,
      startAt,
      topics: this.subscription.topics,
      groupId: this.groupFor(generation),
      writers: this.writers(generation),
      onFatal: this.d.onFatal,
      reload: () =>
        void this.reload().catch((e) =>
          this.d.onFatal(
            new AdjunctError(`reload of ${this.name} after lost offsets failed: ${describeError(e)}`, {
              code: 'RELOAD_FAILED',
              stage: 'bootstrap',
              cause: e,
            }),
          ),
        ),
      onStuck: () => this.restartStuck(task),
    });
    return task;
  }

  /**
   * A new (not begun) tracker of `generation`'s bootstrap, on the topics known now. `catchUp` for the current
   * generation's tracker: a READY generation is READY here only once caught up to the end offsets seen at its begin.
   */
  tracker(generation: number, catchUp = false): ReadyTracker {
    return new ReadyTracker({
      catchUp,
      admin: this.d.admin,
      groupId: this.groupFor(generation),
      topics: this.subscription.topics, // READY is measured on the topics known when the bootstrap (re)starts
      subscribed: () => this.subscription.topics, // less any of them the pattern no longer matches (deleted)
      pipeline: this.name,
      store: this.d.entry.store,
      generation,
      status: this.d.status,
      logger: this.log,
      metrics: this.parts.metrics,
      workerId: this.d.workerId,
      progressBar: this.d.progressBar,
      clock: this.parts.clock,
      shouldStop: this.d.stopping,
    });
  }

  /**
   * Stops a running task and starts a new one of the same generation on the current topics, keeping its counts and
   * pause; a FAILED or STOPPED task (or none) is returned as is.
   */
  async restart(old: PipelineTask | undefined, generation: number): Promise<PipelineTask | undefined> {
    if (!old || old.state === 'FAILED' || old.state === 'STOPPED') return old;
    const paused = old.state === 'PAUSED';
    await old.stop(this.parts.options.shutdownTimeoutMs);
    const next = this.successor(old, generation);
    if (paused) next.pause();
    await next.start();
    return next;
  }

  /**
   * Stops a FAILED task and returns its successor, not started (Kafka Connect's task restart from the committed
   * offsets): the stall state resets, and the caller adopts the successor before starting it.
   */
  async replaceFailed(old: PipelineTask, generation: number): Promise<PipelineTask> {
    await old.stop(this.parts.options.shutdownTimeoutMs);
    this.parts.stall.reset();
    return this.successor(old, generation);
  }

  /**
   * Starts building `generation`: READY's target captured (or restored), the build's table created, then its task
   * started (paused if asked). The table is created only while the build's group has committed nothing: one missing
   * after that was dropped outside adjunct, and re-creating it would hide the records written into it (the build is
   * replaced instead: LostTableWatch). A start that fails stops what it began.
   */
  async startBuild(generation: number, paused: boolean): Promise<{ task: PipelineTask; tracker: ReadyTracker }> {
    const task = this.task(generation);
    const tracker = this.tracker(generation);
    try {
      await tracker.begin();
      if (tracker.noProgressYet()) await this.d.ensureTable(generation);
      if (paused) task.pause(); // before its start: a paused pipeline's build fetches nothing
      await task.start();
    } catch (e) {
      await Promise.all([tracker.stop(), task.stop(this.parts.options.shutdownTimeoutMs).catch(() => undefined)]);
      throw e;
    }
    return { task, tracker };
  }

  /** A new task of `generation` that carries `old`'s counts (a restart in place). */
  successor(old: PipelineTask, generation: number): PipelineTask {
    const next = this.task(generation);
    Object.assign(next.counts, old.counts);
    return next;
  }
}
