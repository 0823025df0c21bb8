import { AdjunctError } from '../errors';
import { Logger } from '../observability/logger';
import { StallMonitor } from './stall-monitor';
import { PipelineState } from './task-status';

/** The state of one task, shared by its loop, error handler and committer (one owner of "stopping" and "failed"). */
export class TaskLifecycle {
  private current: PipelineState = 'CREATED';
  /** The error that failed the task. */
  lastError?: AdjunctError;
  /** Set by stop(): no new record is started, retries give up, interrupted records stay uncommitted. */
  stopping = false;

  constructor(
    private readonly stall: StallMonitor,
    private readonly log: Logger,
    private readonly onFatal: (e: AdjunctError) => void,
  ) {}

  /** The state as shown: RUNNING reads STALLED while a dependency has failed longer than retryTimeout. */
  get state(): PipelineState {
    return this.current === 'RUNNING' && this.stall.stalled ? 'STALLED' : this.current;
  }

  /** Moves to a state (FAILED is final until stop). */
  set(state: PipelineState): void {
    if (this.current !== 'FAILED') this.current = state;
  }

  /** True once the task failed. */
  get failed(): boolean {
    return this.current === 'FAILED';
  }

  /** True while records may still be started. */
  get accepting(): boolean {
    return !this.stopping && !this.failed;
  }

  /** Fails the task once: offsets stay at the last durable record; the owner is told. */
  fail(err: AdjunctError): void {
    if (this.failed) return;
    this.lastError = err;
    this.current = 'FAILED';
    this.log.error({ code: err.code, stage: err.stage, ...err.context, err: err.message }, 'pipeline failed');
    this.onFatal(err);
  }
}
