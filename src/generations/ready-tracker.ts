import { Admin } from 'kafkajs';
import {
  BootstrapProgress,
  BootstrapTarget,
  captureNewPartitions,
  captureTarget,
  fetchPartitionOffsets,
  measureProgress,
  persistedEnd,
  persistedStart,
  ProgressReporter,
} from '../bootstrap';
import type { PipelineStatusTable } from '../catalog';
import { Clock, systemClock } from '../clock';
import { SingleFlight } from '../concurrency';
import { describeError } from '../errors';
import { KafkaRetryOptions, warnKafkaRetry } from '../kafka/kafka-retry';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';

/** Settings of a READY tracker. */
export interface ReadyTrackerOptions {
  admin: Admin;
  /** The generation's consumer group, whose committed offsets are measured. */
  groupId: string;
  topics: string[];
  /**
   * The topics the pipeline consumes now. A topic of `topics` no longer among them (a pattern's topic deleted, or
   * renamed out of the pattern) leaves READY's measure: its records cannot be read any more.
   */
  subscribed?: () => readonly string[];
  pipeline: string;
  store: string;
  generation: number;
  status: PipelineStatusTable;
  logger: Logger;
  metrics: AdjunctMetrics;
  workerId: string;
  pollMs?: number;
  progressBar?: boolean;
  /** Time source of the rate and ETA (default: the system clock). */
  clock?: Clock;
  /** True once the worker is stopping: the start's offset fetches stop retrying (so does `stop()`). */
  shouldStop?: () => boolean;
  /**
   * A generation already READY catches up first (the tracker of a current generation, at a worker's start or a
   * rollback): it is READY here only once its group has committed the end offsets seen when `begin` ran, as a Samza
   * bootstrap stream is read to its end at every start. The persisted READY is left as it is. Default false (a build).
   */
  catchUp?: boolean;
}

/**
 * READY of one generation (Samza-style bootstrap): captures the end and start offsets when it starts (or reuses those persisted
 * by an earlier attempt of the same generation, on any worker), and decides READY once the generation's group has
 * committed them on every partition, even while new records keep arriving. BOOTSTRAPPING/READY and progress are
 * persisted in `adjunct_pipeline_status`, so other processes can watch it or wait for READY; `ready` resolves then
 * (a building generation is switched to at that moment, a current one opens its dependents and `/readyz`).
 */
export class ReadyTracker {
  private target: BootstrapTarget = { end: new Map(), start: new Map() };
  private timer?: NodeJS.Timeout;
  /** The periodic poll in flight: a tick during it starts none (two polls could persist their measures out of order). */
  private readonly polling = new SingleFlight<void>();
  private readyResolve!: () => void;
  /** Resolves when this generation is READY. */
  readonly ready: Promise<void>;
  private progress: BootstrapProgress = { state: 'BOOTSTRAPPING', done: 0, total: 0, ratePerSec: 0, etaSeconds: null };
  /** Records of the target the group had committed at the last measure (undefined before one, or for a restored READY). */
  private measuredDone?: bigint;
  private reporter?: ProgressReporter;
  private stopped = false;
  /** Topics of `topics` that left the measure (see `subscribed`). */
  private readonly left = new Set<string>();
  /** A READY generation catching up to the end offsets seen at `begin` (`catchUp`): nothing is persisted meanwhile. */
  private catchingUp = false;

  constructor(private readonly o: ReadyTrackerOptions) {
    this.ready = new Promise((r) => (this.readyResolve = r));
  }

  /**
   * True when `begin()` measured the generation's group and it had committed no record of the target yet (a new build,
   * or one over empty topics): only then may its table be created. A READY generation (restored, or catching up), or
   * any progress, says false: a table missing then was dropped, and re-creating it would hide the records written into it.
   */
  noProgressYet(): boolean {
    return this.measuredDone === 0n && !this.catchingUp;
  }

  /** Current progress. */
  snapshot(): BootstrapProgress {
    return { ...this.progress };
  }

  /**
   * Restores a persisted READY (with `catchUp`: captures the end offsets now and catches up to them first), or captures
   * (or restores) the end offsets, persists BOOTSTRAPPING and starts polling.
   */
  async begin(): Promise<void> {
    const existing = await this.o.status.get(this.o.pipeline, this.o.generation);
    if (existing?.state === 'READY' && !this.o.catchUp) {
      this.markReady(false);
      return;
    }
    const parts = await fetchPartitionOffsets(this.o.admin, this.o.groupId, this.measuredTopics(), this.startRetry());
    this.catchingUp = existing?.state === 'READY';
    const resumed = existing?.state === 'BOOTSTRAPPING' ? { end: existing.endOffsets, start: existing.startOffsets } : undefined;
    this.target = captureTarget(parts, resumed);
    this.o.logger.info(
      { pipeline: this.o.pipeline, generation: this.o.generation, endOffsets: persistedEnd(this.target), resumed: !!resumed },
      this.catchingUp ? 'bootstrap: READY generation catching up to the end offsets seen now' : 'bootstrap: captured end offsets',
    );
    this.reporter = new ProgressReporter({
      pipeline: this.o.pipeline,
      generation: this.o.generation,
      logger: this.o.logger,
      metrics: this.o.metrics,
      clock: this.o.clock ?? systemClock,
      progressBar: this.o.progressBar ?? false,
    });
    await this.poll(this.startRetry());
    if (!this.stopped && this.progress.state !== 'READY') {
      this.timer = setInterval(() => this.tick(), this.o.pollMs ?? 1000);
    }
  }

  /** At start, a coordinator that is not ready yet is retried with backoff (then KAFKA_UNAVAILABLE), with a warning per retry. */
  private startRetry(): KafkaRetryOptions {
    const { logger, pipeline, groupId, clock } = this.o;
    return {
      clock,
      onRetry: warnKafkaRetry(logger, 'the bootstrap offset fetch', { pipeline, groupId }),
      shouldStop: () => this.stopped || (this.o.shouldStop?.() ?? false),
    };
  }

  /**
   * Re-reads the group's committed offsets, persists progress, and decides READY. A periodic poll tries once (the next
   * poll is the retry); the first one, at start, retries as `retry` says.
   */
  async poll(retry: KafkaRetryOptions = { timeoutMs: 0 }): Promise<void> {
    if (this.progress.state === 'READY' || this.stopped) return;
    const parts = await fetchPartitionOffsets(this.o.admin, this.o.groupId, this.measuredTopics(), retry);
    const added = captureNewPartitions(this.target, parts);
    if (added.length)
      this.o.logger.info(
        { pipeline: this.o.pipeline, generation: this.o.generation, partitions: added },
        'bootstrap: partitions added since the start join the target at their end offsets as of now',
      );
    const m = measureProgress(parts, this.target);
    this.measuredDone = m.done;
    this.progress = this.reporter!.sample(Number(m.done), Number(m.total), m.reached);
    if (this.catchingUp) {
      // The generation's persisted READY stands (it is never taken back): catching up is this worker's own state.
      if (m.reached) this.markReady(true);
      else this.progress.state = 'CATCHING_UP';
      return;
    }
    await this.o.status.put({
      pipeline: this.o.pipeline,
      generation: this.o.generation,
      store: this.o.store,
      state: m.reached ? 'READY' : 'BOOTSTRAPPING',
      recordsDone: Number(m.done),
      recordsTotal: Number(m.total),
      endOffsets: persistedEnd(this.target),
      startOffsets: persistedStart(this.target),
      progress: m.positions,
      lastError: null,
      worker: this.o.workerId,
    });
    if (m.reached) this.markReady(true);
  }

  /** The topics READY is measured on: those known at its start that the pipeline still consumes. */
  private measuredTopics(): string[] {
    if (!this.o.subscribed) return this.o.topics;
    const now = new Set(this.o.subscribed());
    const gone = this.o.topics.filter((t) => !now.has(t) && !this.left.has(t));
    for (const t of gone) this.left.add(t);
    if (gone.length)
      this.o.logger.warn(
        { pipeline: this.o.pipeline, generation: this.o.generation, topics: gone },
        'bootstrap: topics no longer consumed (deleted, or no longer matched by the pattern) leave the READY measure',
      );
    return this.o.topics.filter((t) => !this.left.has(t));
  }

  private markReady(log: boolean): void {
    this.progress = { ...this.progress, state: 'READY', etaSeconds: 0 };
    if (this.timer) clearInterval(this.timer);
    this.reporter?.finished(this.progress.total);
    if (!this.reporter) this.o.metrics.bootstrapProgress.set({ pipeline: this.o.pipeline }, 1);
    if (log)
      this.o.logger.info(
        { pipeline: this.o.pipeline, generation: this.o.generation, records: this.progress.done },
        this.catchingUp ? 'bootstrap READY: caught up to the end offsets seen at start' : 'bootstrap READY',
      );
    this.readyResolve();
  }

  /** One periodic poll, unless the last one is still in flight (the next tick measures again). */
  private tick(): void {
    if (this.polling.busy) return;
    void this.polling.run(() => this.poll().catch((e) => this.o.logger.warn({ err: describeError(e) }, 'bootstrap poll failed')));
  }

  /** Stops polling; resolves once the poll in flight, if any, has ended (its Kafka and Cassandra requests done). */
  stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.reporter?.stop();
    return this.polling.settled();
  }
}
