import { Clock, systemClock } from '../clock/clock';
import { AdjunctError, RetriesExhaustedError, withRetry } from '../errors';

/** Bounds and hooks of a start-up connection loop (Cassandra's, Kafka's). */
export interface StartupWaitOptions {
  /** Give up after this long since the first attempt (default 60 s). */
  timeoutMs?: number;
  /** Time source (default: the system clock). */
  clock?: Clock;
  /** Told about every retriable failure before its backoff (the worker logs a warning). */
  onRetry?: (e: unknown, attempt: number, delayMs: number) => void;
  /** Stops waiting early (the worker was asked to stop while starting). */
  shouldStop?: () => boolean;
}

/** Default bound of a start-up wait: long enough for a node or broker that is still starting. */
export const STARTUP_TIMEOUT_MS = 60_000;

/** How often a wait (an attempt in flight, a backoff) looks at `shouldStop`. */
const STOP_POLL_MS = 100;

/** The error of a start that was asked to stop (a signal): not a failure of the worker; the CLI exits 0. */
export function stoppedWhileStarting(what: string): AdjunctError {
  return new AdjunctError(`stopped while ${what}`, { code: 'STOPPED_WHILE_STARTING', stage: 'worker' });
}

/**
 * Settles with `p`, or rejects with STOPPED_WHILE_STARTING as soon as `shouldStop` says so (polled every 100 ms);
 * `abandoned` is told about a `p` left behind (to close what it may still open).
 */
export async function unlessStopped<T>(
  p: Promise<T>,
  shouldStop: (() => boolean) | undefined,
  what: string,
  abandoned: () => void,
): Promise<T> {
  if (shouldStop === undefined) return p;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      if (!shouldStop()) return;
      abandoned();
      reject(stoppedWhileStarting(what));
    }, STOP_POLL_MS);
  });
  try {
    return await Promise.race([p, stopped]);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Runs `attempt` until it succeeds, retrying the failures `isRetriable` accepts with backoff (200 ms doubling to 2 s)
 * until `timeoutMs` has passed (an attempt under way when it passes runs to its end: the client's own timeouts bound
 * it). Throws the first failure that is not retriable, RetriesExhaustedError past the bound (with the attempts and the
 * time spent), or STOPPED_WHILE_STARTING (`what` names the wait) once `shouldStop` says so: checked before each attempt
 * and every 100 ms of a backoff (the attempt itself should race `unlessStopped`).
 */
export async function waitAtStartup<T>(
  what: string,
  attempt: () => Promise<T>,
  isRetriable: (e: unknown) => boolean,
  o: StartupWaitOptions = {},
): Promise<T> {
  const clock = o.clock ?? systemClock;
  const stop = o.shouldStop;
  const sleep = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0 && !stop?.(); left -= STOP_POLL_MS) await clock.sleep(Math.min(left, STOP_POLL_MS));
  };
  try {
    return await withRetry(
      () => {
        if (stop?.()) throw stoppedWhileStarting(what);
        return attempt();
      },
      {
        timeoutMs: o.timeoutMs ?? STARTUP_TIMEOUT_MS,
        initialDelayMs: 200,
        maxDelayMs: 2000,
        isRetriable,
        onRetry: o.onRetry,
        shouldStop: stop,
        clock,
        sleep,
      },
    );
  } catch (e) {
    if (stop?.()) throw stoppedWhileStarting(what);
    throw e;
  }
}

/** The message of a wait that gave up: `<doing> failed after N attempts in S s: <last error>`. */
export function gaveUpText(doing: string, e: RetriesExhaustedError, lastError: string): string {
  return `${doing} failed after ${e.attempts} attempts in ${(e.elapsedMs / 1000).toFixed(1)} s: ${lastError}`;
}

/** Node's socket error codes of a TLS handshake that failed on certificates or protocol: a setting, not an outage. */
const TLS_FAILURE = /CERT|SSL|TLS|UNABLE_TO_(GET|VERIFY)|SELF_SIGNED|HOSTNAME/;

/** True for an error whose socket code says the TLS handshake failed (a certificate, a host name, TLS to a plaintext port). */
export function isTlsFailure(e: unknown): boolean {
  const code = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && TLS_FAILURE.test(code);
}

/** A start-up wait given the stop condition it must honour (its own, or a sibling's failure). */
export type StartupWait<T> = (shouldStop: () => boolean) => Promise<T>;

/**
 * Runs start-up waits side by side. The first one to fail stops the others (through their `shouldStop`), every one
 * settles before this does, so nothing a wait opens outlives a failed start, and the first real failure is thrown
 * (not a sibling's STOPPED_WHILE_STARTING that it caused). `shouldStop` is the caller's own stop condition.
 */
export async function allAtStartup<A, B>(shouldStop: () => boolean, waits: [StartupWait<A>, StartupWait<B>]): Promise<[A, B]> {
  let oneFailed = false;
  const stop = () => oneFailed || shouldStop();
  const run = <T>(wait: StartupWait<T>): Promise<T> =>
    wait(stop).catch((e: unknown) => {
      oneFailed = true;
      throw e;
    });
  const [a, b] = await Promise.allSettled([run(waits[0]), run(waits[1])]);
  const failures = [a, b].flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (failures.length) throw failures.find((e) => !(e instanceof AdjunctError && e.code === 'STOPPED_WHILE_STARTING')) ?? failures[0];
  return [(a as PromiseFulfilledResult<A>).value, (b as PromiseFulfilledResult<B>).value];
}
