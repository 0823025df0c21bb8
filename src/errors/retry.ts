import { Clock, systemClock } from '../clock/clock';
import { AdjunctError } from './adjunct-error';

/** Backoff settings of a retry loop. */
export interface RetryOptions {
  /** Give up after this much time since the first attempt (`Infinity`: retry until shouldStop says so). */
  timeoutMs: number;
  /** Cap of a single backoff delay. */
  maxDelayMs: number;
  /** First delay. */
  initialDelayMs?: number;
  /** Decides whether an error may be retried. */
  isRetriable: (e: unknown) => boolean;
  /** Called on every retriable failure, before deciding whether to go on (e.g. a stall monitor that may expire). */
  onFailure?: (e: unknown, attempt: number) => void;
  /** Called before each backoff sleep. */
  onRetry?: (e: unknown, attempt: number, delayMs: number) => void;
  /** Called when an attempt succeeds after failed ones. */
  onRecovered?: () => void;
  /** Called once when a loop that had failures ends, by success or by giving up (e.g. a stall monitor forgets the operation). */
  onSettled?: () => void;
  /** Stops retrying early (shutdown). */
  shouldStop?: () => boolean;
  /** Time source (default: the system clock). */
  clock?: Clock;
  /** Waits out one backoff delay (default: the clock's sleep), e.g. in slices with heartbeats between them. */
  sleep?: (ms: number) => Promise<void>;
}

/** Thrown when retries were exhausted; carries the last error as cause. */
export class RetriesExhaustedError extends AdjunctError {
  constructor(
    last: unknown,
    /** Attempts made. */
    readonly attempts: number,
    /** Time from the first attempt to giving up. */
    readonly elapsedMs: number,
  ) {
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

/**
 * Runs fn, retrying retriable failures with exponential backoff and full jitter until timeoutMs or shouldStop.
 * `first` is attempt 1 when it is already under way (fn is then called from attempt 2 on).
 */
export async function withRetry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions, first?: Promise<T>): Promise<T> {
  const clock = o.clock ?? systemClock;
  const start = clock.now();
  let delay = o.initialDelayMs ?? 100;
  let failed = false;
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await (attempt === 1 && first !== undefined ? first : fn(attempt));
        if (attempt > 1) o.onRecovered?.();
        return result;
      } catch (e) {
        if (!o.isRetriable(e)) throw e;
        failed = true;
        o.onFailure?.(e, attempt);
        const elapsed = clock.now() - start;
        if (elapsed >= o.timeoutMs || o.shouldStop?.()) throw new RetriesExhaustedError(e, attempt, elapsed);
        const d = Math.min(delay, o.maxDelayMs, Math.max(0, o.timeoutMs - elapsed));
        const jittered = Math.round(d / 2 + Math.random() * (d / 2));
        o.onRetry?.(e, attempt, jittered);
        await (o.sleep ? o.sleep(jittered) : clock.sleep(jittered));
        // A stop asked for during the backoff ends the retries here, without one more attempt.
        if (o.shouldStop?.()) throw new RetriesExhaustedError(e, attempt, clock.now() - start);
        delay = Math.min(delay * 2, o.maxDelayMs);
      }
    }
  } finally {
    if (failed) o.onSettled?.();
  }
}
