import type { Client } from 'cassandra-driver';
import { Clock, systemClock } from '../clock/clock';
import { cassandraErrorText, isRetriableCassandraError, RetriesExhaustedError, StoreError, withRetry } from '../errors';
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

/**
 * True for a start-up failure a later attempt may fix: Cassandra not reachable yet, still starting, timing out or
 * overloaded. A refused login is not: a NoHostAvailableError whose every host refused the credentials fails at once.
 */
export function isRetriableAtStartup(e: unknown): boolean {
  if (e instanceof Error && e.name === 'NoHostAvailableError') {
    const inner = Object.values((e as { innerErrors?: Record<string, unknown> }).innerErrors ?? {});
    if (inner.length > 0 && inner.every((x) => x instanceof Error && x.name === 'AuthenticationError')) return false;
  }
  return isRetriableCassandraError(e);
}

/**
 * Connects the client and runs `prepare` (keyspace and catalog), retrying retriable failures with backoff (200 ms
 * doubling to 2 s) for up to `timeoutMs`, so a worker started before Cassandra accepts connections waits for it instead
 * of exiting into a restart loop. Past the bound it fails with CASSANDRA_UNAVAILABLE naming the last error; any other
 * failure (bad credentials, a refused statement) is thrown at once. The driver resets its state after a failed
 * connect, so each attempt starts afresh.
 */
export async function connectCassandraAtStartup<T>(client: Client, prepare: () => Promise<T>, o: CassandraStartupOptions = {}): Promise<T> {
  const timeoutMs = o.timeoutMs ?? CASSANDRA_STARTUP_TIMEOUT_MS;
  const clock = o.clock ?? systemClock;
  const started = clock.now();
  let attempts = 0;
  try {
    return await withRetry(
      async () => {
        attempts++;
        await client.connect();
        return prepare();
      },
      {
        timeoutMs,
        initialDelayMs: 200,
        maxDelayMs: 2000,
        isRetriable: isRetriableAtStartup,
        onRetry: o.onRetry,
        shouldStop: o.shouldStop,
        clock,
      },
    );
  } catch (e) {
    if (!(e instanceof RetriesExhaustedError)) throw e;
    const seconds = ((clock.now() - started) / 1000).toFixed(1);
    throw new StoreError(
      `connecting to Cassandra at start-up failed after ${attempts} attempts in ${seconds} s: ${cassandraErrorText(e.cause)}`,
      {
        code: 'CASSANDRA_UNAVAILABLE',
        retriable: true,
        cause: e.cause,
      },
    );
  }
}

/** An `onRetry` that warns once per start-up retry (attempt, delay and the error, without driver internals). */
export function warnCassandraStartupRetry(log: Logger): CassandraStartupOptions['onRetry'] {
  return (e, attempt, delayMs) => log.warn({ attempt, delayMs, err: cassandraErrorText(e) }, 'Cassandra not ready at start-up: retrying');
}
