import { Clock } from '../clock';
import { AdjunctError, describeError, isPipelineStage, PipelineStage, RetryOptions } from '../errors';
import { Logger } from '../observability/logger';
import { AdjunctMetrics } from '../observability/metrics';
import { StallMonitor } from './stall-monitor';

/** What a pipeline's stall policy is built from. */
export interface StallPolicyParts {
  pipeline: string;
  stall: StallMonitor;
  metrics: AdjunctMetrics;
  /** Logs retried failures (bound to the pipeline). */
  log: Logger;
  clock: Clock;
  /** First backoff delay. */
  initialDelayMs: number;
  /** Cap of one backoff delay (errors.retryMaxDelay). */
  maxDelayMs: number;
}

/** One operation retried under the stall policy. */
export interface StalledOperation {
  /** Stage counted and logged when the error names none of the record path. */
  stage: PipelineStage;
  /** The failures of the infrastructure, retried; any other failure goes to tolerance at once. */
  isRetriable: (e: unknown) => boolean;
  /** True once retrying must end (shutdown, a failed task): the record then stays uncommitted. */
  stopping: () => boolean;
  /** Log line of a retried failure (first attempt and every tenth). */
  message: string;
}

/**
 * The stall policy for a retry loop run elsewhere (the store's): one shared object, so the loop passes its own
 * operation (a fresh object per retried request) to onFailure and onSettled.
 */
export interface RetryPolicy extends Pick<RetryOptions, 'timeoutMs' | 'maxDelayMs' | 'isRetriable' | 'shouldStop' | 'onRetry'> {
  /** Every retriable failure of the operation `op`. */
  onFailure(error: unknown, attempt: number, op: object): void;
  /** The operation `op`, which had failed, ended (succeeded or gave up). */
  onSettled(op: object): void;
}

/**
 * Kafka Connect's rule for sinks, as one policy of a pipeline: an infrastructure failure is retried with backoff for
 * as long as it lasts (the stall monitor shows STALLED after errors.retryTimeout), counted and logged, until
 * shutdown or errors.stallTimeout; success clears the stall. Record failures are never retried: they go to tolerance.
 */
export class StallPolicy {
  constructor(private readonly p: StallPolicyParts) {}

  /** Options of `withRetry` for op: forever, stopping on shutdown or an expired stall; `sleep` waits out a backoff. */
  retryOptions(op: StalledOperation, sleep?: (ms: number) => Promise<void>): RetryOptions {
    const { stall, clock, initialDelayMs, maxDelayMs } = this.p;
    const operation = {};
    return {
      timeoutMs: Number.POSITIVE_INFINITY,
      initialDelayMs,
      maxDelayMs,
      clock,
      sleep,
      isRetriable: op.isRetriable,
      onFailure: (e) => stall.failed(e, operation),
      shouldStop: () => op.stopping() || stall.expired !== null,
      onRetry: (e, attempt, delayMs) => this.retrying(op, e, attempt, delayMs),
      onSettled: () => stall.settled(operation),
    };
  }

  /** The same policy for a retry loop run elsewhere (the store's): each retried request is its own operation. */
  retryPolicy(op: StalledOperation): RetryPolicy {
    const { stall, maxDelayMs } = this.p;
    return {
      timeoutMs: Number.POSITIVE_INFINITY,
      maxDelayMs,
      isRetriable: op.isRetriable,
      shouldStop: () => op.stopping() || stall.expired !== null,
      onFailure: (e, _attempt, operation) => stall.failed(e, operation),
      onRetry: (e, attempt, delayMs) => this.retrying(op, e, attempt, delayMs),
      onSettled: (operation) => stall.settled(operation),
    };
  }

  /** Counts a retry and logs the first one and every tenth. */
  private retrying(op: StalledOperation, e: unknown, attempt: number, delayMs: number): void {
    const stage = e instanceof AdjunctError && isPipelineStage(e.stage) ? e.stage : op.stage;
    this.p.metrics.retries.inc({ pipeline: this.p.pipeline, stage });
    if (attempt === 1 || attempt % 10 === 0) this.p.log.warn({ stage, attempt, delayMs, err: describeError(e) }, op.message);
  }
}
