import { Admin } from 'kafkajs';
import type { PipelineSpec } from '../config/schema';
import { PipelineStatusTable, StoreCatalog, StoreEntry } from '../catalog';
import { AdjunctError, describeError } from '../errors';
import { Logger } from '../observability/logger';
import { PartitionWriterFactory } from '../sink/partition-writer';
import { PipelineParts } from '../sink/pipeline-parts';
import { PartitionStatus, PipelineState, PipelineStatus, PipelineTask } from '../sink/pipeline-task';
import { BootstrapProgress, BootstrapTracker, fetchPartitionOffsets, outOfRange } from '../bootstrap';
import { TopicChange, TopicSubscription } from './topic-subscription';

/** What a runner needs besides the parts its tasks share: the catalog side of generations and bootstrap. */
export interface PipelineRunnerDeps {
  spec: PipelineSpec;
  admin: Admin;
  baseGroupId: string;
  catalog: StoreCatalog;
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
}

/**
 * Runs one pipeline: the task writing the current generation, and — during a reload — a second task building
 * the next generation from the earliest offset under its own consumer group. When the build is READY the store's
 * generation pointer is switched atomically and the building task becomes the main one.
 */
export class PipelineRunner {
  private main?: PipelineTask;
  private mainTracker?: BootstrapTracker;
  private build?: { generation: number; task: PipelineTask; tracker: BootstrapTracker };
  private generation: number;
  private stopped = false;
  private janitor?: NodeJS.Timeout;
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
  }

  /** Pipeline name. */
  get name(): string {
    return this.d.spec.name;
  }

  /** Consumer group of a generation: generations have their own groups so a rebuild starts from the earliest offset. */
  groupFor(generation: number): string {
    return `${this.d.baseGroupId}.${this.d.spec.name}.g${generation}`;
  }

  /** Starts the main task (and resumes an unfinished reload); handles offset-out-of-range per policy. */
  async start(): Promise<void> {
    const entry = (await this.d.catalog.get(this.d.entry.store)) ?? this.d.entry;
    this.generation = entry.currentGeneration;
    this.parts.metrics.generation.set({ pipeline: this.name, store: entry.store }, this.generation);
    let reload = entry.buildingGeneration !== null || this.d.spec.resetOffset;
    const topics = await this.subscription.resolve();
    const oor = outOfRange(await fetchPartitionOffsets(this.d.admin, this.groupFor(this.generation), topics));
    if (oor.length) {
      const where = oor.map((p) => `${p.topic}/${p.partition} committed ${p.committed} < log start ${p.low}`).join(', ');
      const policy = this.d.spec.onOffsetOutOfRange;
      this.log.error({ policy, partitions: where }, `OFFSET OUT OF RANGE: records were deleted by retention before the store saw them (${where}); policy=${policy}`);
      if (policy === 'fail') throw new AdjunctError(`pipeline ${this.name}: committed offsets fell off the log (${where}); onOffsetOutOfRange=fail`, { code: 'OFFSET_OUT_OF_RANGE', stage: 'consume' });
      if (policy === 'latest') {
        for (const p of oor) {
          const hi = (await this.d.admin.fetchTopicOffsets(p.topic)).find((x) => x.partition === p.partition)!.high;
          await this.d.admin.setOffsets({ groupId: this.groupFor(this.generation), topic: p.topic, partitions: [{ partition: p.partition, offset: hi }] });
        }
        this.log.warn('offsets moved to the latest offset; the records in between are NOT in the store');
      }
      if (policy === 'reload') reload = true;
    }
    this.main = this.newTask(this.generation);
    if (this.d.spec.bootstrap) {
      this.mainTracker = this.newTracker(this.generation);
    }
    await this.main.start();
    if (this.mainTracker) await this.mainTracker.begin();
    if (reload) await this.reload();
    this.subscription.watch((change) => this.resubscribe(change));
    this.janitor = setInterval(() => void this.dropExpiredGeneration().catch((e) => this.log.warn({ err: describeError(e) }, 'generation clean-up failed')), 5000);
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
      reload: () => void this.reload().catch((e) => this.d.onFatal(new AdjunctError(`reload of ${this.name} after lost offsets failed: ${describeError(e)}`, { code: 'RELOAD_FAILED', stage: 'bootstrap', cause: e }))),
    });
  }

  private newTracker(generation: number): BootstrapTracker {
    return new BootstrapTracker({
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
    const generation = await this.d.catalog.beginBuild(this.d.entry.store);
    this.log.warn({ generation, current: this.generation }, 'reload: building a new generation from the earliest offset; readers stay on the current one');
    const task = this.newTask(generation);
    const tracker = this.newTracker(generation);
    this.build = { generation, task, tracker };
    await task.start();
    await tracker.begin();
    void tracker.ready.then(() => this.finishReload(generation)).catch((e) => this.d.onFatal(new AdjunctError(`reload of ${this.name} failed: ${describeError(e)}`, { code: 'RELOAD_FAILED', stage: 'bootstrap', cause: e })));
    return generation;
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
        this.d.onFatal(new AdjunctError(`pipeline ${this.name}: re-subscribing to ${change.topics.join(', ')} failed: ${describeError(e)}`, { code: 'RESUBSCRIBE_FAILED', stage: 'consume', cause: e }));
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
    const { previous } = await this.d.catalog.switchTo(this.d.entry.store, generation, this.d.spec.keepPreviousGeneration);
    this.log.warn({ generation, previous }, 'reload complete: store switched to the new generation');
    const old = this.main;
    const oldTracker = this.mainTracker;
    this.main = this.build.task;
    this.mainTracker = this.build.tracker;
    this.build = undefined;
    this.generation = generation;
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.d.entry.store }, generation);
    oldTracker?.stop();
    await old?.stop(this.parts.options.shutdownTimeoutMs);
  }

  /** Switches readers back to the previous generation (kept for keepPreviousGeneration) and writes into it again. */
  rollback(): Promise<{ current: number; previous: number }> {
    return this.exclusive(() => this.rollbackNow());
  }

  private async rollbackNow(): Promise<{ current: number; previous: number }> {
    if (this.build) {
      this.build.tracker.stop();
      await this.build.task.stop(this.parts.options.shutdownTimeoutMs);
      await this.d.catalog.cancelBuild(this.d.entry.store);
      this.build = undefined;
    }
    const r = await this.d.catalog.rollback(this.d.entry.store, this.d.spec.keepPreviousGeneration);
    this.log.warn(r, 'rollback: store switched back to the previous generation');
    const old = this.main;
    this.mainTracker?.stop();
    await old?.stop(this.parts.options.shutdownTimeoutMs);
    this.generation = r.current;
    this.main = this.newTask(r.current);
    this.mainTracker = this.d.spec.bootstrap ? this.newTracker(r.current) : undefined;
    await this.main.start();
    await this.mainTracker?.begin();
    this.parts.metrics.generation.set({ pipeline: this.name, store: this.d.entry.store }, r.current);
    return r;
  }

  /** Drops the previous generation's table once its keep time has passed. */
  async dropExpiredGeneration(now = new Date(this.parts.clock.now())): Promise<number | null> {
    const g = await this.d.catalog.expirePrevious(this.d.entry.store, now);
    if (g !== null) {
      await this.d.dropGeneration(g);
      this.log.info({ generation: g }, 'previous generation dropped after its keep time');
    }
    return g;
  }

  /** Pauses consumption. */
  pause(): void {
    this.main?.pause();
    this.build?.task.pause();
  }

  /** Resumes consumption. */
  resume(): void {
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
    this.subscription.stop();
    this.mainTracker?.stop();
    this.build?.tracker.stop();
    await this.exclusive(() => Promise.all([this.main?.stop(this.parts.options.shutdownTimeoutMs), this.build?.task.stop(this.parts.options.shutdownTimeoutMs)]));
  }

  /** Status snapshot. */
  status(): RunnerStatus {
    const main = this.main?.status() ?? { name: this.name, state: 'CREATED' as PipelineState, partitions: [], counts: { consumed: 0, written: 0, skipped: 0, deadLettered: 0, expired: 0, lostOffsets: 0 } };
    const retention = this.d.spec.store.kind === 'versioned' ? this.d.spec.store.historyRetention : null;
    return {
      ...main,
      partitions: main.partitions.map((p) => ({ ...p, horizon: p.observedStreamTime === null || retention === null ? null : p.observedStreamTime - retention })),
      store: this.d.entry.store,
      generation: this.generation,
      bootstrap: this.mainTracker?.snapshot(),
      building: this.build ? { generation: this.build.generation, progress: this.build.tracker.snapshot(), task: this.build.task.status() } : undefined,
    };
  }
}
