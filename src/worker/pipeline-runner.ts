import { generationGroup, ReadyTracker, WriterHeartbeat } from '../generations';
import { AdjunctError, describeError, ErrorCode, ErrorStage } from '../errors';
import { Logger } from '../observability/logger';
import { PipelineParts } from '../sink/pipeline-parts';
import { PipelineState, PipelineTask } from '../sink/pipeline-task';
import { warnKafkaRetry } from '../kafka/kafka-retry';
import { checkStartPositions, OffsetLossPolicy } from '../offsets';
import { CatalogFollower } from './catalog-follower';
import { BuildingGeneration, GenerationBuild } from './generation-build';
import { GenerationTasks } from './generation-tasks';
import { LostTableWatch } from './lost-table';
import { PipelineRunnerDeps } from './runner-deps';
import { RunnerStatus, runnerStatus } from './runner-status';
import { TopicChange, TopicSubscription } from './topic-subscription';

export type { RunnerStatus } from './runner-status';

/**
 * Runs one pipeline: the task writing the current generation, and — during a reload — a second task building
 * the next generation from the earliest offset under its own consumer group. When the build is READY the store's
 * generation pointer is switched atomically and the building task becomes the main one.
 */
export class PipelineRunner {
  private main?: PipelineTask;
  private mainTracker?: ReadyTracker;
  /** The start in progress or done (`start`), awaited by `stop`. */
  private startup?: Promise<void>;
  private readonly build: GenerationBuild;
  private generation: number;
  private stopped = false;
  private janitor?: NodeJS.Timeout;
  private paused = false;
  private readonly follower: CatalogFollower;
  private readonly heartbeat: WriterHeartbeat;
  private readonly log: Logger;
  private readonly subscription: TopicSubscription;
  private readonly tasks: GenerationTasks;
  private readonly lostTable: LostTableWatch;
  private readonly offsetLossPolicy: OffsetLossPolicy;
  /** Task swaps (reload switch, rollback, re-subscription, stop) run one at a time. */
  private swaps: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly parts: PipelineParts,
    private readonly d: PipelineRunnerDeps,
  ) {
    this.generation = d.entry.currentGeneration;
    this.log = parts.logger.child({ pipeline: d.spec.name });
    const { metrics } = parts;
    this.subscription = new TopicSubscription(d.spec, d.admin, this.log, (n) => metrics.missingTopics.set({ pipeline: d.spec.name }, n));
    this.offsetLossPolicy = new OffsetLossPolicy({ pipeline: d.spec.name, policy: d.spec.onOffsetOutOfRange, metrics, log: this.log });
    this.heartbeat = new WriterHeartbeat(d.generations, d.spec.name, d.entry.store, d.workerId, this.log, () => this.follower.followSoon());
    this.tasks = new GenerationTasks(
      parts,
      d,
      this.subscription,
      this.log,
      (g) => this.groupFor(g),
      () => this.reload(),
      (task) => this.restartStuck(task),
      () => this.tableMissing(),
    );
    this.build = new GenerationBuild({
      store: d.entry.store,
      generations: d.generations,
      startBuild: (g, paused) => this.tasks.startBuild(g, paused),
      writes: (g, role) => this.heartbeat.writes(g, role),
      forget: (g) => this.forget(g),
      tableExists: d.tableExists,
      keepPreviousGeneration: d.spec.keepPreviousGeneration,
      current: () => this.generation,
      paused: () => this.paused,
      stopped: () => this.stopped,
      exclusive: (fn) => this.exclusive(fn),
      promote: (b) => this.promote(b),
      follow: () => this.follower.converge(),
      sleep: (ms) => this.parts.clock.sleep(ms),
      fail: (e) => this.fail(e, 'RELOAD_FAILED', 'bootstrap', `reload of ${this.name} failed`),
      shutdownTimeoutMs: parts.options.shutdownTimeoutMs,
      log: this.log,
    });
    this.lostTable = new LostTableWatch({
      exclusive: (fn) => this.exclusive(fn),
      converge: () => this.follower.converge(),
      main: () =>
        this.stopped || !this.main || this.main.state === 'STOPPED' ? undefined : { generation: this.generation, task: this.main },
      build: () => (this.stopped ? undefined : this.build.active),
      replaceBuild: (lost) => this.build.replaceLost(lost, 'the table of the generation being built was dropped outside adjunct'),
      view: () => this.d.generations.view(this.name, this.store),
      tableExists: this.d.tableExists,
      sleep: (ms) => this.parts.clock.sleep(ms),
      rebuild: async () => void (await this.build.begin()),
      fatal: (e) => this.d.onFatal(e),
      shutdownTimeoutMs: this.parts.options.shutdownTimeoutMs,
      log: this.log,
      store: d.entry.store,
    });
    this.follower = new CatalogFollower({
      view: () => this.d.generations.view(this.name, this.store),
      writers: () => this.d.generations.writers(this.name),
      local: () => ({ main: this.main ? this.generation : undefined, build: this.build.active?.generation, paused: this.paused }),
      handlers: {
        stopBuild: () => this.build.stop(),
        promoteBuild: () => this.build.promote(),
        restartMain: (g) => this.restartMain(g),
        joinBuild: (g) => this.build.join(g),
        pause: () => this.setPaused(true),
        resume: () => this.setPaused(false),
      },
      exclusive: (fn) => this.exclusive(fn),
      stopped: () => this.stopped,
      log: this.log,
    });
  }

  /** Pipeline name. */
  get name(): string {
    return this.d.spec.name;
  }

  /** Consumer group of a generation. */
  groupFor(generation: number): string {
    return generationGroup(this.d.baseGroupId, this.d.spec.name, generation);
  }

  private get store(): string {
    return this.d.entry.store;
  }

  /**
   * Starts the main task (and resumes an unfinished reload); handles offset-out-of-range per policy. A stop while it
   * starts (a dependent pipeline starting as the worker stops) wins: the start goes no further than the step it was in,
   * and what it began after the stop is stopped, so no task, timer or Kafka connection outlives the stop.
   */
  start(): Promise<void> {
    this.startup = (async () => {
      try {
        await this.startSteps();
      } finally {
        if (this.stopped) await this.halt();
      }
    })();
    return this.startup;
  }

  private async startSteps(): Promise<void> {
    if (this.stopped) return;
    const view = await this.d.generations.view(this.name, this.store);
    if (this.stopped) return;
    this.generation = view.current;
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.store }, this.generation);
    const topics = await this.subscription.resolve();
    if (this.stopped) return;
    const group = this.groupFor(this.generation);
    const positions = await checkStartPositions(this.d.admin, group, topics, this.offsetLossPolicy, {
      onRetry: warnKafkaRetry(this.log, 'the start-up offset check', { groupId: group }),
      shouldStop: () => this.stopped || this.d.stopping(),
    });
    if (this.stopped) return;
    await this.heartbeat.writes(this.generation, 'current');
    if (this.stopped) return;
    this.main = this.tasks.task(this.generation, positions.startAt);
    this.main.counts.lostOffsets += positions.lostOffsets;
    // A READY generation catches up to the end offsets seen now before this worker says READY (and starts dependents).
    if (this.d.spec.bootstrap) this.mainTracker = this.tasks.tracker(this.generation, true);
    // READY's target (end offsets and start positions) is captured before the consumer moves: the whole backlog counts.
    if (this.mainTracker) await this.mainTracker.begin();
    // A pipeline paused in the catalog starts paused: its consumer fetches nothing until resumed.
    if (view.paused) this.setPaused(true);
    if (this.stopped) return;
    await this.main.start();
    if (this.stopped) return;
    // A build seen in progress is joined only if the catalog still names it once the main task has joined its group.
    const begin = this.d.spec.resetOffset || positions.reload;
    await this.exclusive(() => this.build.atStart(begin, view.building !== null));
    if (this.stopped) return;
    // A current table found lost at start is checked now, not only when a record arrives (an idle pipeline).
    if (this.d.currentTableLost) this.tableMissing();
    this.subscription.watch((change) => this.resubscribe(change));
    this.heartbeat.start(this.d.generationPollMs);
    this.follower.start(this.d.generationPollMs);
    this.janitor = setInterval(
      () => void this.dropExpiredGeneration().catch((e) => this.log.warn({ err: describeError(e) }, 'generation clean-up failed')),
      Math.max(this.d.generationPollMs, 1000),
    );
  }

  /** This worker no longer writes `generation` (its task has stopped), unless a task of it still does. */
  private async forget(generation: number): Promise<void> {
    if (generation !== this.generation && generation !== this.build.active?.generation) await this.heartbeat.stopped(generation);
  }

  /** Resolves when the current generation is READY (bootstrap pipelines) — immediately otherwise. */
  async whenReady(): Promise<void> {
    if (this.mainTracker) await this.mainTracker.ready;
  }

  /** True unless the current table was lost, when the pipeline is not a bootstrap pipeline or its current generation is READY. */
  isReady(): boolean {
    // The current generation's table was lost: the store is being rebuilt (LostTableWatch).
    if (this.lostTable.isLost(this.generation)) return false;
    return !this.mainTracker || this.mainTracker.snapshot().state === 'READY';
  }

  /** Starts (or resumes) building a new generation from the earliest offset; switches when it is READY. */
  reload(): Promise<number> {
    return this.exclusive(() => this.build.begin());
  }

  /** Runs task swaps one at a time, so a re-subscription never races a reload switch, a rollback or a stop. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.swaps.catch(() => undefined).then(fn);
    this.swaps = next;
    return next;
  }

  /**
   * The pattern's matched topics changed: restart each task on the new set. kafkajs can only change a subscription by
   * stop → subscribe → run; a task's stop drains its in-flight writes and commits their offsets first, and a new topic
   * has no committed offset in the group, so it is read from its earliest offset. Nothing is skipped or lost.
   */
  private resubscribe(change: TopicChange): Promise<void> {
    return this.exclusive(async () => {
      if (this.stopped) return;
      try {
        this.main = await this.tasks.restart(this.main, this.generation);
        const b = this.build.active;
        if (b) b.task = (await this.tasks.restart(b.task, b.generation))!;
      } catch (e) {
        this.fail(e, 'RESUBSCRIBE_FAILED', 'consume', `pipeline ${this.name}: re-subscribing to ${change.topics.join(', ')} failed`);
      }
    });
  }

  /** The built generation became current (here or on another worker): it becomes the main task; the old one stops. */
  private async promote(b: BuildingGeneration): Promise<void> {
    const old = this.main;
    const oldGeneration = this.generation;
    const oldTracker = this.mainTracker;
    this.main = b.task;
    this.mainTracker = b.tracker;
    this.generation = b.generation;
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.store }, b.generation);
    await this.heartbeat.writes(b.generation, 'current');
    await Promise.all([oldTracker?.stop(), old?.stop(this.parts.options.shutdownTimeoutMs)]);
    if (oldGeneration !== b.generation) await this.forget(oldGeneration);
  }

  /** The main task moves to another generation (a rollback done here or anywhere). */
  private async restartMain(generation: number): Promise<void> {
    const oldGeneration = this.generation;
    await Promise.all([this.mainTracker?.stop(), this.main?.stop(this.parts.options.shutdownTimeoutMs)]);
    await this.heartbeat.writes(generation, 'current');
    this.generation = generation;
    this.main = this.tasks.task(generation);
    // The generation rolled back to stopped being written at the switch: READY here once caught up again.
    this.mainTracker = this.d.spec.bootstrap ? this.tasks.tracker(generation, true) : undefined;
    await this.mainTracker?.begin();
    if (this.paused) this.main.pause();
    await this.main.start();
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.store }, generation);
    if (oldGeneration !== generation) await this.forget(oldGeneration);
  }

  /**
   * Switches readers back to generation `to` (the kept previous one) and writes into it again; idempotent (rolling back
   * to the current generation changes nothing). A build in progress is cancelled. Other workers follow at their next poll.
   */
  rollback(to: number): Promise<{ current: number; previous: number | null; changed: boolean }> {
    return this.exclusive(async () => {
      const r = await this.d.generations.rollbackTo(this.store, to, this.d.spec.keepPreviousGeneration);
      if (r.changed) this.log.warn(r, 'rollback: store switched back to the previous generation');
      await this.follower.converge();
      return r;
    });
  }

  /** Drops the previous generation's table once its keep time has passed and no live worker writes it. */
  async dropExpiredGeneration(now = new Date(this.parts.clock.now())): Promise<number | null> {
    const g = await this.d.generations.dropExpired(this.name, this.store, now, (x) => this.d.dropGeneration(x));
    if (g !== null) this.log.info({ generation: g }, 'previous generation dropped after its keep time (no live worker writes it)');
    return g;
  }

  /** A write found its table missing: the catalog is followed, and a lost current table rebuilt (`LostTableWatch`). */
  tableMissing(): void {
    this.lostTable.report();
  }

  /** The progress watchdog found a task's consumer stuck: that task is restarted in place (`GenerationTasks.restart`). */
  private restartStuck(task: PipelineTask): void {
    void this.exclusive(async () => {
      const build = this.build.active;
      const generation = this.main === task ? this.generation : build?.task === task ? build.generation : undefined;
      if (this.stopped || generation === undefined) return;
      const next = (await this.tasks.restart(task, generation))!;
      if (this.main === task) this.main = next;
      else build!.task = next;
      this.log.warn({ generation }, 'stuck consumer restarted from its committed offsets');
    }).catch((e) => this.fail(e, 'CONSUMER_CRASH', 'consume', `pipeline ${this.name}: restarting a stuck consumer failed`));
  }

  /** The pipeline fails with `code` (the worker's fatal path), naming what failed and why. */
  private fail(e: unknown, code: ErrorCode, stage: ErrorStage, what: string): void {
    this.d.onFatal(new AdjunctError(`${what}: ${describeError(e)}`, { code, stage, cause: e }));
  }

  /** Restarts a FAILED main task in place from its committed offsets (Kafka Connect's task restart); resolves with the new state. */
  restart(): Promise<string> {
    return this.exclusive(async () => {
      const old = this.main;
      if (this.stopped || !old || old.state !== 'FAILED') {
        throw new AdjunctError(`pipeline ${this.name} is ${this.state}, not FAILED: nothing to restart`, {
          code: 'PIPELINE_NOT_FAILED',
          stage: 'worker',
        });
      }
      // The successor is the main task before it starts: a start that fails leaves it where a stop finds it.
      const next = await this.tasks.replaceFailed(old, this.generation);
      this.main = next;
      if (this.paused) next.pause();
      await next.start();
      this.log.warn({ generation: this.generation, failedWith: old.lastError?.code }, 'pipeline restarted from its committed offsets');
      return next.state;
    });
  }

  /** Pauses consumption on every worker: persisted in the catalog, applied here now and elsewhere at the next poll. */
  async pause(): Promise<void> {
    await this.d.generations.setPaused(this.name, true);
    await this.exclusive(async () => this.setPaused(true));
  }

  /** Resumes consumption on every worker (persisted like pause). */
  async resume(): Promise<void> {
    await this.d.generations.setPaused(this.name, false);
    await this.exclusive(async () => this.setPaused(false));
  }

  /** Pauses (or resumes) this worker's tasks of the pipeline, the build's too. */
  private setPaused(paused: boolean): void {
    this.paused = paused;
    for (const t of [this.main, this.build.active?.task]) {
      if (paused) t?.pause();
      else t?.resume();
    }
  }

  /** Current state of the main task. */
  get state(): PipelineState {
    return this.main?.state ?? 'CREATED';
  }

  /** Stops every task of this pipeline (drains and commits). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.halt();
    // A start in progress stops at its next step and stops what it began (its Kafka and Cassandra calls end before the
    // worker closes its clients, which a late call would otherwise open again).
    await this.startup?.catch(() => undefined);
  }

  /** Stops the timers, trackers and tasks there are now (again after a start the stop overtook: `start`). */
  private async halt(): Promise<void> {
    if (this.janitor) clearInterval(this.janitor);
    this.follower.stop();
    const refreshEnded = this.subscription.stop();
    this.lostTable.close();
    // A tracker's poll in flight ends before the worker closes the admin and Cassandra it uses.
    const pollsEnded = [this.mainTracker?.stop(), this.build.active?.tracker.stop()];
    await this.exclusive(async () => {
      const b = this.build.active;
      pollsEnded.push(b?.tracker.stop()); // a build joined while the stop waited for this step
      await Promise.all([this.main?.stop(this.parts.options.shutdownTimeoutMs), b?.task.stop(this.parts.options.shutdownTimeoutMs)]);
      await this.heartbeat.close();
    });
    // After the swaps: a refresh that found a change waits for its re-subscription, which runs (and ends: stopped) after them.
    await Promise.all([refreshEnded, ...pollsEnded]);
  }

  /** Status snapshot. */
  status(): RunnerStatus {
    const { spec } = this.d;
    return runnerStatus({
      spec,
      store: this.store,
      generation: this.generation,
      main: this.main,
      mainTracker: this.mainTracker,
      build: this.build.active,
      paused: this.paused,
      writers: this.follower.writers,
      missingTopics: this.subscription.missing,
    });
  }
}
