import type { Client } from 'cassandra-driver';
import { Clock, systemClock } from '../clock/clock';
import {
  AdjunctError,
  cassandraErrorText,
  isRetriableCassandraError,
  RetriesExhaustedError,
  StoreError,
  withRetry,
  wrapCassandraError,
} from '../errors';
import { Logger } from '../observability/logger';

/** Default bound of the start-up wait for Cassandra: as long as the Kafka start-up retries (a node still starting). */
export const CASSANDRA_STARTUP_TIMEOUT_MS = 60_000;

/** Bounds and hooks of the start-up connection loop. */
export interface CassandraStartupOptions {
  /** Give up after this long since the first attempt (default 60 s). */
  timeoutMs?: number;
  /** Time source (default: the system clock). */
  clock?: Clock;
  /** Told about every retriable failure before its backoff (the worker logs a warning). */
  onRetry?: (e: unknown, attempt: number, delayMs: number) => void;
  /** Stops waiting early (the worker was asked to stop while starting). */
  shouldStop?: () => boolean;
}

/** How often a wait (an attempt in flight, a backoff) looks at `shouldStop`. */
const STOP_POLL_MS = 100;

/** An AuthenticationError of a node still starting (its auth data not readable yet), not of wrong credentials. */
const TRANSIENT_AUTH = /Unable to perform authentication|Cannot achieve consistency/i;

/** True when every host refused the login itself (wrong credentials), not because it could not read its auth data yet. */
function isRefusedLogin(e: unknown): boolean {
  if (!(e instanceof Error) || e.name !== 'NoHostAvailableError') return false;
  const inner = Object.values((e as { innerErrors?: Record<string, unknown> }).innerErrors ?? {});
  const refused = (x: unknown) => x instanceof Error && x.name === 'AuthenticationError' && !TRANSIENT_AUTH.test(x.message);
  return inner.length > 0 && inner.every(refused);
}

/**
 * True for a start-up failure a later attempt may fix: Cassandra not reachable yet, still starting, timing out or
 * overloaded; not a login every host refused (a host that only could not read its auth data yet is still starting).
 */
export function isRetriableAtStartup(e: unknown): boolean {
  return !isRefusedLogin(e) && isRetriableCassandraError(e);
}

/** The error of a start-up wait that was asked to stop. */
function stoppedWhileStarting(): AdjunctError {
  return new AdjunctError('stopped while waiting for Cassandra at start-up', {
    code: 'RETRIES_EXHAUSTED',
    retriable: false,
    stage: 'store',
  });
}

/** Settles with `p`, or rejects as soon as `shouldStop` says so (polled); `abandoned` is told about a `p` left behind. */
async function unlessStopped<T>(p: Promise<T>, shouldStop: (() => boolean) | undefined, abandoned: () => void): Promise<T> {
  if (shouldStop === undefined) return p;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setInterval(() => {
      if (!shouldStop()) return;
      abandoned();
      reject(stoppedWhileStarting());
    }, STOP_POLL_MS);
  });
  try {
    return await Promise.race([p, stopped]);
  } finally {
    clearInterval(timer);
  }
}

/**
 * Connects the client and runs `prepare` (keyspace and catalog), retrying retriable failures with backoff (200 ms
 * doubling to 2 s) until `timeoutMs` has passed (an attempt under way when it passes runs to its end: the driver's
 * connect and request timeouts bound it), so a worker started before Cassandra accepts connections waits for it instead
 * of exiting into a restart loop. Past the bound it fails with CASSANDRA_UNAVAILABLE naming the last error; any other
 * failure (wrong credentials, a refused statement) fails at once, as a StoreError without driver internals (wrong
 * credentials as a configuration error). `shouldStop` ends the wait within 100 ms, also mid-attempt (a connection
 * that still comes up is shut down). The driver resets its state after a failed connect, so each attempt starts afresh.
 */
export async function connectCassandraAtStartup<T>(client: Client, prepare: () => Promise<T>, o: CassandraStartupOptions = {}): Promise<T> {
  const timeoutMs = o.timeoutMs ?? CASSANDRA_STARTUP_TIMEOUT_MS;
  const clock = o.clock ?? systemClock;
  const stop = o.shouldStop;
  const attempt = async (): Promise<T> => {
    if (stop?.()) throw stoppedWhileStarting();
    const connecting = client.connect();
    // Abandoned mid-attempt: a connection that still comes up must not stay open.
    await unlessStopped(connecting, stop, () => void connecting.then(() => client.shutdown()).catch(() => undefined));
    return unlessStopped(prepare(), stop, () => void client.shutdown().catch(() => undefined));
  };
  const sleep = async (ms: number): Promise<void> => {
    for (let left = ms; left > 0 && !stop?.(); left -= STOP_POLL_MS) await clock.sleep(Math.min(left, STOP_POLL_MS));
  };
  try {
    return await withRetry(attempt, {
      timeoutMs,
      initialDelayMs: 200,
      maxDelayMs: 2000,
      isRetriable: isRetriableAtStartup,
      onRetry: o.onRetry,
      shouldStop: stop,
      clock,
      sleep,
    });
  } catch (e) {
    if (stop?.()) throw stoppedWhileStarting();
    if (isRefusedLogin(e)) {
      throw new StoreError(`connecting to Cassandra at start-up: the login was refused (${cassandraErrorText(e)})`, {
        code: 'CASSANDRA_ERROR',
        retriable: false,
        stage: 'config',
        cause: e,
      });
    }
    if (!(e instanceof RetriesExhaustedError)) throw wrapCassandraError(e, 'connecting to Cassandra at start-up');
    const seconds = (e.elapsedMs / 1000).toFixed(1);
    throw new StoreError(
      `connecting to Cassandra at start-up failed after ${e.attempts} attempts in ${seconds} s: ${cassandraErrorText(e.cause)}`,
      { code: 'CASSANDRA_UNAVAILABLE', retriable: true, cause: e.cause },
    );
  }
}

/** An `onRetry` that warns once per start-up retry (attempt, delay and the error, without driver internals). */
export function warnCassandraStartupRetry(log: Logger): CassandraStartupOptions['onRetry'] {
  return (e, attempt, delayMs) => log.warn({ attempt, delayMs, err: cassandraErrorText(e) }, 'Cassandra not ready at start-up: retrying');
}
