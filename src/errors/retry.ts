import { Clock, systemClock } from '../clock/clock';
import { AdjunctError } from './adjunct-error';

/** Backoff settings of a retry loop. */
export interface RetryOptions {
  /** Give up after this much time since the first attempt. */
  timeoutMs: number;
  /** Cap of a single backoff delay. */
  maxDelayMs: number;
  /** First delay. */
  initialDelayMs?: number;
  /** Decides whether an error may be retried. */
  isRetriable: (e: unknown) => boolean;
  /** Called before each backoff sleep. */
  onRetry?: (e: unknown, attempt: number, delayMs: number) => void;
  /** Stops retrying early (shutdown). */
  shouldStop?: () => boolean;
  /** Time source (default: the system clock). */
  clock?: Clock;
}

/** Thrown when retries were exhausted; carries the last error as cause. */
export class RetriesExhaustedError extends AdjunctError {
  constructor(last: unknown, attempts: number, elapsedMs: number) {
    const msg = last instanceof Error ? last.message : String(last);
    const stage = last instanceof AdjunctError ? last.stage : undefined;
    super(`gave up after ${attempts} attempts in ${elapsedMs} ms: ${msg}`, {
      code: 'RETRIES_EXHAUSTED',
      retriable: false,
      stage,
      cause: last,
    });
  }
}

/** Sleeps for ms milliseconds. */
export const sleep = (ms: number) => systemClock.sleep(ms);

/** Runs fn, retrying retriable failures with exponential backoff and full jitter until timeoutMs. */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  const clock = o.clock ?? systemClock;
  const start = clock.now();
  let delay = o.initialDelayMs ?? 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      const elapsed = clock.now() - start;
      if (!o.isRetriable(e)) throw e;
      if (elapsed >= o.timeoutMs || o.shouldStop?.()) throw new RetriesExhaustedError(e, attempt, elapsed);
      const d = Math.min(delay, o.maxDelayMs, Math.max(0, o.timeoutMs - elapsed));
      const jittered = Math.round(d / 2 + Math.random() * (d / 2));
      o.onRetry?.(e, attempt, jittered);
      await clock.sleep(jittered);
      delay = Math.min(delay * 2, o.maxDelayMs);
    }
  }
}
