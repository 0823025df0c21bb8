import type { Client } from 'cassandra-driver';
import {
  AdjunctError,
  cassandraErrorText,
  isRetriableCassandraError,
  RetriesExhaustedError,
  StoreError,
  wrapCassandraError,
} from '../errors';
import { Logger } from '../observability/logger';
import { gaveUpText, isTlsFailure, StartupWaitOptions, unlessStopped, waitAtStartup } from './startup-wait';

/** Bounds and hooks of the Cassandra start-up wait. */
export type CassandraStartupOptions = StartupWaitOptions;

/** An AuthenticationError of a node still starting (its auth data not readable yet), not of wrong credentials. */
const TRANSIENT_AUTH = /Unable to perform authentication|Cannot achieve consistency/i;

/** True when every host of a NoHostAvailableError failed with `why`. */
function everyHost(e: unknown, why: (x: unknown) => boolean): boolean {
  if (!(e instanceof Error) || e.name !== 'NoHostAvailableError') return false;
  const inner = Object.values((e as { innerErrors?: Record<string, unknown> }).innerErrors ?? {});
  return inner.length > 0 && inner.every(why);
}

/** True when every host refused the login itself (wrong credentials), not because it could not read its auth data yet. */
function isRefusedLogin(e: unknown): boolean {
  return everyHost(e, (x) => x instanceof Error && x.name === 'AuthenticationError' && !TRANSIENT_AUTH.test(x.message));
}

/** True when the TLS handshake failed with every host (a certificate, a host name, TLS to a plaintext port). */
function isTlsRefused(e: unknown): boolean {
  return everyHost(e, isTlsFailure);
}

/**
 * True for a start-up failure a later attempt may fix: Cassandra not reachable yet, still starting, timing out or
 * overloaded; not a login every host refused (a host that only could not read its auth data yet is still starting), nor
 * a TLS handshake every host failed.
 */
export function isRetriableAtStartup(e: unknown): boolean {
  return !isRefusedLogin(e) && !isTlsRefused(e) && isRetriableCassandraError(e);
}

/** What the wait is doing, for the error of a stop in its middle. */
const WAITING = 'waiting for Cassandra at start-up';

/** What a failure of the wait names. */
const CONNECTING = 'connecting to Cassandra at start-up';

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
  const stop = o.shouldStop;
  const attempt = async (): Promise<T> => {
    const connecting = client.connect();
    // Abandoned mid-attempt: a connection that still comes up must not stay open.
    await unlessStopped(connecting, stop, WAITING, () => void connecting.then(() => client.shutdown()).catch(() => undefined));
    return unlessStopped(prepare(), stop, WAITING, () => void client.shutdown().catch(() => undefined));
  };
  try {
    return await waitAtStartup(WAITING, attempt, isRetriableAtStartup, o);
  } catch (e) {
    if (e instanceof AdjunctError && e.code === 'STOPPED_WHILE_STARTING') throw e;
    if (isRefusedLogin(e) || isTlsRefused(e)) {
      const what = isRefusedLogin(e) ? 'the login was refused' : 'the TLS handshake failed';
      throw new StoreError(`${CONNECTING}: ${what} (${cassandraErrorText(e)})`, {
        code: 'CASSANDRA_ERROR',
        retriable: false,
        stage: 'config',
        cause: e,
      });
    }
    if (!(e instanceof RetriesExhaustedError)) throw wrapCassandraError(e, CONNECTING);
    throw new StoreError(gaveUpText(CONNECTING, e, cassandraErrorText(e.cause)), {
      code: 'CASSANDRA_UNAVAILABLE',
      retriable: true,
      cause: e.cause,
    });
  }
}

/** An `onRetry` that warns once per start-up retry (attempt, delay and the error, without driver internals). */
export function warnCassandraStartupRetry(log: Logger): CassandraStartupOptions['onRetry'] {
  return (e, attempt, delayMs) => log.warn({ attempt, delayMs, err: cassandraErrorText(e) }, 'Cassandra not ready at start-up: retrying');
}
