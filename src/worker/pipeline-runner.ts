import { Admin } from 'kafkajs';
import type { PipelineSpec } from '../config/schema';
import { PipelineStatusTable } from '../catalog';
import {
  FollowStep,
  generationGroup,
  Generations,
  LiveWriter,
  planFollow,
  ReadyTracker,
  StoreEntry,
  WriterHeartbeat,
  WriterRole,
} from '../generations';
import { AdjunctError, describeError } from '../errors';
import { Logger } from '../observability/logger';
import { PartitionWriterFactory } from '../sink/partition-writer';
import { PipelineParts } from '../sink/pipeline-parts';
import { PartitionStatus, PipelineState, PipelineStatus, PipelineTask } from '../sink/pipeline-task';
import { BootstrapProgress, fetchPartitionOffsets, outOfRange } from '../bootstrap';
import { TopicChange, TopicSubscription } from './topic-subscription';

/** What a runner needs besides the parts its tasks share: the catalog side of generations and bootstrap. */
export interface PipelineRunnerDeps {
  spec: PipelineSpec;
  admin: Admin;
  baseGroupId: string;
  generations: Generations;
  /** How often the runner re-reads the catalog to follow reloads, switches, rollbacks and pauses started anywhere. */
  generationPollMs: number;
  status: PipelineStatusTable;
  entry: StoreEntry;
  /** Writers into a given table generation. */
  writersFor: (generation: number) => PartitionWriterFactory;
  /** Drops the table of a generation. */
  dropGeneration: (generation: number) => Promise<void>;
  workerId: string;
  progressBar: boolean;
  onFatal: (e: AdjunctError) => void;
}

/** A partition's status plus its retention horizon (streamTime − historyRetention; null without stream time or for kv stores). */
export type RunnerPartitionStatus = PartitionStatus & { horizon: number | null };

/** Status of a pipeline including its generations, bootstrap and each partition's retention horizon. */
export interface RunnerStatus extends Omit<PipelineStatus, 'partitions'> {
  partitions: RunnerPartitionStatus[];
  store: string;
  generation: number;
  building?: { generation: number; progress: BootstrapProgress | null; task: PipelineStatus };
  bootstrap?: BootstrapProgress;
  /** Persisted pause flag as this worker last applied it. */
  paused: boolean;
  /** Every live worker of this pipeline and the generation it writes (as of this worker's last catalog poll). */
  writers: LiveWriter[];
}

/**
 * Runs one pipeline: the task writing the current generation, and — during a reload — a second task building
 * the next generation from the earliest offset under its own consumer group. When the build is READY the store's
 * generation pointer is switched atomically and the building task becomes the main one.
 */
export class PipelineRunner {
  private main?: PipelineTask;
  private mainTracker?: ReadyTracker;
  private build?: { generation: number; task: PipelineTask; tracker: ReadyTracker };
  private generation: number;
  private stopped = false;
  private janitor?: NodeJS.Timeout;
  private follower?: NodeJS.Timeout;
  private paused = false;
  private writers: LiveWriter[] = [];
  private readonly heartbeat: WriterHeartbeat;
  private readonly log: Logger;
  private readonly subscription: TopicSubscription;
  /** Task swaps (reload switch, rollback, re-subscription, stop) run one at a time. */
  private swaps: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly parts: PipelineParts,
    private readonly d: PipelineRunnerDeps,
  ) {
    this.generation = d.entry.currentGeneration;
    this.log = parts.logger.child({ pipeline: d.spec.name });
    this.subscription = new TopicSubscription(d.spec, d.admin, this.log);
    this.heartbeat = new WriterHeartbeat(d.generations, d.spec.name, d.entry.store, d.workerId, this.log, () => this.followSoon());
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

  /** Starts the main task (and resumes an unfinished reload); handles offset-out-of-range per policy. */
  async start(): Promise<void> {
    const view = await this.d.generations.view(this.name, this.store);
    this.generation = view.current;
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.store }, this.generation);
    let reload = view.building !== null || this.d.spec.resetOffset;
    const topics = await this.subscription.resolve();
    const oor = outOfRange(await fetchPartitionOffsets(this.d.admin, this.groupFor(this.generation), topics));
    if (oor.length) {
      const where = oor.map((p) => `${p.topic}/${p.partition} committed ${p.committed} < log start ${p.low}`).join(', ');
      const policy = this.d.spec.onOffsetOutOfRange;
      this.log.error(
        { policy, partitions: where },
        `OFFSET OUT OF RANGE: records were deleted by retention before the store saw them (${where}); policy=${policy}`,
      );
      if (policy === 'fail')
        throw new AdjunctError(`pipeline ${this.name}: committed offsets fell off the log (${where}); onOffsetOutOfRange=fail`, {
          code: 'OFFSET_OUT_OF_RANGE',
          stage: 'consume',
        });
      if (policy === 'latest') {
        for (const p of oor) {
          const hi = (await this.d.admin.fetchTopicOffsets(p.topic)).find((x) => x.partition === p.partition)!.high;
          await this.d.admin.setOffsets({
            groupId: this.groupFor(this.generation),
            topic: p.topic,
            partitions: [{ partition: p.partition, offset: hi }],
          });
        }
        this.log.warn('offsets moved to the latest offset; the records in between are NOT in the store');
      }
      if (policy === 'reload') reload = true;
    }
    await this.beat(this.generation, 'current');
    this.main = this.newTask(this.generation);
    if (this.d.spec.bootstrap) {
      this.mainTracker = this.newTracker(this.generation);
    }
    await this.main.start();
    if (view.paused) this.pauseTasks();
    if (this.mainTracker) await this.mainTracker.begin();
    if (reload) await this.reload();
    this.subscription.watch((change) => this.resubscribe(change));
    this.heartbeat.start(this.d.generationPollMs);
    this.follower = setInterval(
      () =>
        void this.follow().catch((e) =>
          this.log.warn({ err: describeError(e) }, 'following the catalog failed; retrying at the next poll'),
        ),
      this.d.generationPollMs,
    );
    this.janitor = setInterval(
      () => void this.dropExpiredGeneration().catch((e) => this.log.warn({ err: describeError(e) }, 'generation clean-up failed')),
      Math.max(this.d.generationPollMs, 1000),
    );
  }

  /** Registers (or refreshes) this worker as a writer of a generation; done before any write into it. */
  private beat(generation: number, role: WriterRole): Promise<void> {
    return this.heartbeat.writes(generation, role);
  }

  /** This worker no longer writes `generation` (its task has stopped), unless a task of it still does. */
  private async forget(generation: number): Promise<void> {
    if (generation !== this.generation && generation !== this.build?.generation) await this.heartbeat.stopped(generation);
  }

  /**
   * One catalog poll: re-reads the store row and pause flag, then joins a build started anywhere, takes over a switch
   * or rollback done anywhere, applies pause/resume, and refreshes this worker's heartbeats.
   */
  follow(): Promise<void> {
    return this.exclusive(async () => {
      if (this.stopped) return;
      const view = await this.d.generations.view(this.name, this.store);
      const steps = planFollow(view, { main: this.main ? this.generation : undefined, build: this.build?.generation, paused: this.paused });
      for (const step of steps) await this.apply(step);
      this.writers = await this.d.generations.writers(this.name);
    });
  }

  private async apply(step: FollowStep): Promise<void> {
    if (step.kind !== 'pause' && step.kind !== 'resume')
      this.log.warn({ step: step.kind, generation: step.generation, current: this.generation }, 'following the catalog');
    switch (step.kind) {
      case 'stopBuild':
        return this.stopBuild();
      case 'promoteBuild':
        return this.promoteBuild();
      case 'restartMain':
        return this.restartMain(step.generation);
      case 'joinBuild':
        await this.joinBuild(step.generation);
        return;
      case 'pause':
        return this.pauseTasks();
      case 'resume':
        return this.resumeTasks();
    }
  }

  /** Resolves when the current generation is READY (bootstrap pipelines) — immediately otherwise. */
  async whenReady(): Promise<void> {
    if (this.mainTracker) await this.mainTracker.ready;
  }

  /** True when the pipeline is not a bootstrap pipeline or its current generation is READY. */
  isReady(): boolean {
    return !this.mainTracker || this.mainTracker.snapshot().state === 'READY';
  }

  private newTask(generation: number): PipelineTask {
    return new PipelineTask(this.parts, {
      generation,
      topics: this.subscription.topics,
      groupId: this.groupFor(generation),
      writers: this.d.writersFor(generation),
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
    });
  }

  private newTracker(generation: number): ReadyTracker {
    return new ReadyTracker({
      admin: this.d.admin,
      groupId: this.groupFor(generation),
      topics: this.subscription.topics, // READY is measured on the topics known when the bootstrap (re)starts
      pipeline: this.name,
      store: this.d.entry.store,
      generation,
      status: this.d.status,
      logger: this.log,
      metrics: this.parts.metrics,
      workerId: this.d.workerId,
      progressBar: this.d.progressBar,
      clock: this.parts.clock,
    });
  }

  /** Starts (or resumes) building a new generation from the earliest offset; switches when it is READY. */
  reload(): Promise<number> {
    return this.exclusive(() => this.beginReload());
  }

  private async beginReload(): Promise<number> {
    if (this.build) return this.build.generation;
    const generation = await this.d.generations.begin(this.store);
    this.log.warn(
      { generation, current: this.generation },
      'reload: building a new generation from the earliest offset; readers stay on the current one; every worker joins at its next catalog poll',
    );
    return this.joinBuild(generation);
  }

  /** Builds `generation` under its own consumer group beside the main task; whoever sees it READY first switches. */
  private async joinBuild(generation: number): Promise<number> {
    if (this.build) return this.build.generation;
    await this.beat(generation, 'building');
    const task = this.newTask(generation);
    const tracker = this.newTracker(generation);
    this.build = { generation, task, tracker };
    await task.start();
    if (this.paused) task.pause();
    await tracker.begin();
    void tracker.ready
      .then(() => this.finishReload(generation))
      .catch((e) =>
        this.d.onFatal(
          new AdjunctError(`reload of ${this.name} failed: ${describeError(e)}`, { code: 'RELOAD_FAILED', stage: 'bootstrap', cause: e }),
        ),
      );
    return generation;
  }

  private async stopBuild(): Promise<void> {
    const b = this.build;
    if (!b) return;
    this.build = undefined;
    b.tracker.stop();
    await b.task.stop(this.parts.options.shutdownTimeoutMs);
    await this.forget(b.generation);
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
        this.main = await this.restartTask(this.main, this.generation);
        if (this.build) this.build.task = (await this.restartTask(this.build.task, this.build.generation))!;
      } catch (e) {
        this.d.onFatal(
          new AdjunctError(`pipeline ${this.name}: re-subscribing to ${change.topics.join(', ')} failed: ${describeError(e)}`, {
            code: 'RESUBSCRIBE_FAILED',
            stage: 'consume',
            cause: e,
          }),
        );
      }
    });
  }

  private async restartTask(old: PipelineTask | undefined, generation: number): Promise<PipelineTask | undefined> {
    if (!old || old.state === 'FAILED' || old.state === 'STOPPED') return old;
    const paused = old.state === 'PAUSED';
    await old.stop(this.parts.options.shutdownTimeoutMs);
    const next = this.newTask(generation);
    Object.assign(next.counts, old.counts);
    await next.start();
    if (paused) next.pause();
    return next;
  }

  private finishReload(generation: number): Promise<void> {
    return this.exclusive(() => this.switchToBuilt(generation));
  }

  private async switchToBuilt(generation: number): Promise<void> {
    if (this.stopped || !this.build || this.build.generation !== generation) return;
    const { previous, applied } = await this.d.generations.switchTo(this.store, generation, this.d.spec.keepPreviousGeneration);
    if (applied) this.log.warn({ generation, previous }, 'reload complete: store switched to the new generation');
    await this.promoteBuild();
  }

  /** The built generation became current (here or on another worker): it becomes the main task; the old one stops. */
  private async promoteBuild(): Promise<void> {
    const b = this.build;
    if (!b) return;
    const old = this.main;
    const oldGeneration = this.generation;
    const oldTracker = this.mainTracker;
    this.main = b.task;
    this.mainTracker = b.tracker;
    this.build = undefined;
    this.generation = b.generation;
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.store }, b.generation);
    await this.beat(b.generation, 'current');
    oldTracker?.stop();
    await old?.stop(this.parts.options.shutdownTimeoutMs);
    if (oldGeneration !== b.generation) await this.forget(oldGeneration);
  }

  /** The main task moves to another generation (a rollback done here or anywhere). */
  private async restartMain(generation: number): Promise<void> {
    const oldGeneration = this.generation;
    this.mainTracker?.stop();
    await this.main?.stop(this.parts.options.shutdownTimeoutMs);
    await this.beat(generation, 'current');
    this.generation = generation;
    this.main = this.newTask(generation);
    this.mainTracker = this.d.spec.bootstrap ? this.newTracker(generation) : undefined;
    await this.main.start();
    if (this.paused) this.main.pause();
    await this.mainTracker?.begin();
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
      const view = await this.d.generations.view(this.name, this.store);
      for (const step of planFollow(view, {
        main: this.main ? this.generation : undefined,
        build: this.build?.generation,
        paused: this.paused,
      }))
        await this.apply(step);
      return r;
    });
  }

  /** Drops the previous generation's table once its keep time has passed and no live worker writes it. */
  async dropExpiredGeneration(now = new Date(this.parts.clock.now())): Promise<number | null> {
    const g = await this.d.generations.dropExpired(this.name, this.store, now, (x) => this.d.dropGeneration(x));
    if (g !== null) this.log.info({ generation: g }, 'previous generation dropped after its keep time (no live worker writes it)');
    return g;
  }

  /** Follows the catalog now rather than at the next poll (a generation this worker writes was retired, or its table is gone). */
  followSoon(): void {
    void this.follow().catch((e) => this.log.warn({ err: describeError(e) }, 'following the catalog failed; retrying at the next poll'));
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
      await old.stop(this.parts.options.shutdownTimeoutMs);
      this.parts.stall.reset();
      const next = this.newTask(this.generation);
      Object.assign(next.counts, old.counts);
      this.main = next;
      await next.start();
      if (this.paused) next.pause();
      this.log.warn({ generation: this.generation, failedWith: old.lastError?.code }, 'pipeline restarted from its committed offsets');
      return next.state;
    });
  }

  /** Pauses consumption on every worker: persisted in the catalog, applied here now and elsewhere at the next poll. */
  async pause(): Promise<void> {
    await this.d.generations.setPaused(this.name, true);
    await this.exclusive(async () => this.pauseTasks());
  }

  /** Resumes consumption on every worker (persisted like pause). */
  async resume(): Promise<void> {
    await this.d.generations.setPaused(this.name, false);
    await this.exclusive(async () => this.resumeTasks());
  }

  private pauseTasks(): void {
    this.paused = true;
    this.main?.pause();
    this.build?.task.pause();
  }

  private resumeTasks(): void {
    this.paused = false;
    this.main?.resume();
    this.build?.task.resume();
  }

  /** Current state of the main task. */
  get state(): PipelineState {
    return this.main?.state ?? 'CREATED';
  }

  /** Stops every task of this pipeline (drains and commits). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.janitor) clearInterval(this.janitor);
    if (this.follower) clearInterval(this.follower);
    this.subscription.stop();
    this.mainTracker?.stop();
    this.build?.tracker.stop();
    await this.exclusive(async () => {
      await Promise.all([
        this.main?.stop(this.parts.options.shutdownTimeoutMs),
        this.build?.task.stop(this.parts.options.shutdownTimeoutMs),
      ]);
      await this.heartbeat.close();
    });
  }

  /** Status snapshot. */
  status(): RunnerStatus {
    const main = this.main?.status() ?? {
      name: this.name,
      state: 'CREATED' as PipelineState,
      partitions: [],
      counts: { consumed: 0, written: 0, skipped: 0, deadLettered: 0, expired: 0, lostOffsets: 0 },
    };
    const retention = this.d.spec.store.kind === 'versioned' ? this.d.spec.store.historyRetention : null;
    return {
      ...main,
      partitions: main.partitions.map((p) => ({
        ...p,
        horizon: p.observedStreamTime === null || retention === null ? null : p.observedStreamTime - retention,
      })),
      store: this.store,
      generation: this.generation,
      paused: this.paused,
      writers: this.writers,
      bootstrap: this.mainTracker?.snapshot(),
      building: this.build
        ? { generation: this.build.generation, progress: this.build.tracker.snapshot(), task: this.build.task.status() }
        : undefined,
    };
  }
}
