import { Clock } from '../clock';
import { AdjunctError, describeError, isPipelineStage, isRecordFailure, PipelineStage, RetriesExhaustedError, withRetry } from '../errors';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { DeadLetterSink } from './pipeline-parts';
import { SinkRecord, recordLocation } from './sink-record';
import { StallMonitor } from './stall-monitor';
import { StalledOperation, StallPolicy } from './stall-policy';
import { TaskLifecycle } from './task-lifecycle';
import { CompiledSinkTaskOptions } from './task-options';

/** Keeps the consumer in its group while the loop waits (kafkajs `heartbeat()` of the batch). */
export type Heartbeat = () => Promise<void>;

/** What became of a failed record: durable in the DLQ, or deliberately left uncommitted. */
export type Disposition = 'dead-lettered' | 'left-pending';

/** Collaborators of an error handler. */
export interface ErrorHandlerParts {
  lifecycle: TaskLifecycle;
  stall: StallMonitor;
  dlq?: DeadLetterSink;
  clock: Clock;
  metrics: AdjunctMetrics;
  log: Logger;
}

/**
 * Kafka Connect's RetryWithToleranceOperator for a sink: infrastructure failures are retried with backoff (the
 * pipeline stalls, heartbeating, until the dependency is back, shutdown, or errors.stallTimeout); tolerance applies to
 * record failures only (DLQ or stop). A record whose retries were interrupted is never dead-lettered: it stays pending.
 */
export class ErrorHandler {
  private readonly policy: StallPolicy;
  /** How this task's own retries fit the stall policy: retriable AdjunctErrors only, until the task stops accepting. */
  private readonly retried: Omit<StalledOperation, 'stage'>;

  constructor(
    private readonly o: CompiledSinkTaskOptions,
    private readonly p: ErrorHandlerParts,
  ) {
    const { stall, metrics, log, clock } = p;
    this.policy = new StallPolicy({
      pipeline: o.pipeline,
      stall,
      metrics,
      log,
      clock,
      initialDelayMs: o.retryInitialDelayMs,
      maxDelayMs: o.retryMaxDelayMs,
    });
    this.retried = {
      isRetriable: (e) => e instanceof AdjunctError && e.retriable,
      stopping: () => !p.lifecycle.accepting,
      message: 'dependency unavailable: retrying with backoff; nothing is committed past this record',
    };
  }

  /**
   * Runs op, retrying retriable failures with backoff and heartbeats until success; throws record failures at once.
   * `first` is the first attempt already under way (the per-record fast path: no retry closure is called on success).
   */
  async retry<T>(
    first: Promise<T> | null,
    op: () => Promise<T>,
    stage: PipelineStage,
    heartbeat: Heartbeat,
    /** Ends the retries early as well (the record's partition was fenced). */
    stop?: () => boolean,
  ): Promise<T> {
    if (first !== null) {
      try {
        return await first;
      } catch {
        // The first attempt failed: withRetry takes it up as attempt 1 (awaiting it again rethrows its failure).
      }
    }
    const backoff = (ms: number) => this.backoff(ms, heartbeat, stop);
    const stopping = stop ? () => this.retried.stopping() || stop() : this.retried.stopping;
    return withRetry(op, this.policy.retryOptions({ ...this.retried, stopping, stage }, backoff), first ?? undefined);
  }

  /** Sleeps in slices of at most one heartbeat interval, heartbeating between them, while the task accepts records. */
  private async backoff(delayMs: number, heartbeat: Heartbeat, stop?: () => boolean): Promise<void> {
    let left = delayMs;
    while (left > 0 && this.p.lifecycle.accepting && stop?.() !== true) {
      const slice = Math.min(left, this.o.heartbeatIntervalMs);
      await this.p.clock.sleep(slice);
      left -= slice;
      await heartbeat().catch(() => undefined);
    }
  }

  /**
   * Applies tolerance to a failed record: DLQ it (tolerance all, record failures only) or leave it pending and stop.
   * `fenced` tells when the record's partition was fenced (a rebalance under it): a dead letter still being retried
   * then stops and the record is left for the partition's next owner, which decides about it again.
   */
  async handle(record: SinkRecord, err: AdjunctError, heartbeat: Heartbeat, fenced?: () => boolean): Promise<Disposition> {
    const { lifecycle } = this.p;
    if (lifecycle.failed) return 'left-pending';
    if (!isRecordFailure(err)) return this.infrastructureFailure(record, err);
    const stage = isPipelineStage(err.stage) ? err.stage : 'write';
    this.p.metrics.errors.inc({ pipeline: this.o.pipeline, stage, class: err.code });
    const where = recordLocation(record);
    if (this.o.tolerance !== 'all' || !this.p.dlq) {
      lifecycle.fail(
        new AdjunctError(`pipeline ${this.o.pipeline} stopped at ${where} (stage ${stage}): ${err.message}`, {
          code: err.code,
          stage,
          cause: err,
          context: { topic: record.topic, partition: record.partition, offset: record.offset },
        }),
      );
      return 'left-pending';
    }
    return this.deadLetter(record, err, stage, heartbeat, fenced);
  }

  /** An infrastructure failure reached tolerance: its retries were interrupted. Never a dead letter. */
  private infrastructureFailure(record: SinkRecord, err: AdjunctError): Disposition {
    const { lifecycle, stall } = this.p;
    if (stall.expired) lifecycle.fail(stall.expired);
    else if (!lifecycle.stopping) {
      lifecycle.fail(
        new AdjunctError(`pipeline ${this.o.pipeline} stopped at ${recordLocation(record)}: ${err.message}`, {
          code: err.code,
          stage: err.stage,
          cause: err,
          context: { topic: record.topic, partition: record.partition, offset: record.offset },
        }),
      );
    }
    return 'left-pending';
  }

  private async deadLetter(
    record: SinkRecord,
    err: AdjunctError,
    stage: PipelineStage,
    heartbeat: Heartbeat,
    fenced?: () => boolean,
  ): Promise<Disposition> {
    const dlq = this.p.dlq!;
    try {
      await this.retry(null, () => dlq.report(record, err, stage), 'dlq', heartbeat, fenced);
    } catch (e) {
      if (e instanceof RetriesExhaustedError && (this.p.lifecycle.stopping || fenced?.() === true)) return 'left-pending';
      const cause = e instanceof RetriesExhaustedError && this.p.stall.expired ? this.p.stall.expired : e;
      this.p.lifecycle.fail(
        new AdjunctError(`cannot write record ${recordLocation(record)} to the dead-letter queue: ${describeError(cause)}`, {
          code: 'DLQ_FAILED',
          stage: 'dlq',
          cause,
          context: { topic: record.topic, partition: record.partition, offset: record.offset },
        }),
      );
      return 'left-pending';
    }
    this.p.metrics.deadLettered.inc({ pipeline: this.o.pipeline, stage });
    this.p.log.warn(
      { topic: record.topic, partition: record.partition, offset: record.offset, stage, code: err.code, err: err.message },
      'record sent to dead-letter queue',
    );
    return 'dead-lettered';
  }
}
