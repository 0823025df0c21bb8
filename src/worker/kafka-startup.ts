import type { Admin } from 'kafkajs';
import { AdjunctError, describeError, RetriesExhaustedError } from '../errors';
import { isRetriableKafkaError, kafkaErrorChain } from '../kafka/kafka-retry';
import { Logger } from '../observability/logger';
import { connectAdmin } from './clients';
import { gaveUpText, isTlsFailure, StartupWaitOptions, unlessStopped, waitAtStartup } from './startup-wait';

/** Bounds and hooks of the Kafka start-up wait. */
export type KafkaStartupOptions = StartupWaitOptions;

/** What kafkajs throws (a plain Error) for a request on a broker whose connection attempt failed a moment ago. */
const BROKER_NOT_CONNECTED = /^Broker not connected$/;

/** The failure in a word or two: the innermost error kafkajs wrapped (its retrier's give-up names the last failure). */
export function kafkaErrorText(e: unknown): string {
  const all = kafkaErrorChain(e);
  return describeError(all.length ? all[all.length - 1] : e);
}

/** A login the broker refused: wrong credentials or mechanism, which no retry fixes. */
function isRefusedLogin(e: unknown): boolean {
  return kafkaErrorChain(e).some((x) => x.name === 'KafkaJSSASLAuthenticationError');
}

/** A TLS handshake that failed on a certificate, a host name or the protocol (TLS against a plaintext port). */
function isTlsRefused(e: unknown): boolean {
  return kafkaErrorChain(e).some(isTlsFailure);
}

/**
 * True for a start-up failure a later attempt may fix: no broker reachable yet, a broker not answering, a coordinator
 * or metadata not ready; never a refused login or a failed TLS handshake (settings no wait fixes).
 */
export function isRetriableAtKafkaStartup(e: unknown): boolean {
  if (!(e instanceof Error) || isRefusedLogin(e) || isTlsRefused(e)) return false;
  return isRetriableKafkaError(e) || kafkaErrorChain(e).some((x) => x.constructor === Error && BROKER_NOT_CONNECTED.test(x.message));
}

/** What the wait is doing, for the error of a stop in its middle. */
const WAITING = 'waiting for Kafka at start-up';

/** What a failure of the wait names. */
const CONNECTING = 'connecting to Kafka at start-up';

/** Disconnects once `connecting` has settled (a kafkajs connect goes on retrying after a disconnect and would reopen). */
function disconnectAfter(admin: Admin, connecting: Promise<unknown>): void {
  void admin.disconnect().catch(() => undefined);
  void connecting.then(
    () => admin.disconnect().catch(() => undefined),
    () => admin.disconnect().catch(() => undefined),
  );
}

/**
 * Waits until a broker answers, then connects `admin` and loads the broker list (connectAdmin). Each attempt connects a
 * fresh `probe()` admin, whose client makes one try per call (no kafkajs retries), so an attempt lasts one connection or
 * request timeout, not kafkajs's retry schedule; failures are retried with backoff (200 ms doubling to 2 s) until
 * `timeoutMs` has passed, so a worker started before Kafka accepts connections waits for it instead of exiting into a
 * restart loop. Past the bound it fails with KAFKA_UNAVAILABLE naming the last error; a refused login or a failed TLS
 * handshake fails at once as a configuration error. `shouldStop` ends the wait within 100 ms, also mid-attempt; an
 * abandoned admin is disconnected again once its connect settles, so nothing it opens stays open.
 */
export async function connectKafkaAtStartup(admin: Admin, probe: () => Admin, o: KafkaStartupOptions = {}): Promise<void> {
  const stop = o.shouldStop;
  const connect = async (a: Admin, closeAfter: boolean): Promise<void> => {
    const connecting = connectAdmin(a);
    try {
      await unlessStopped(connecting, stop, WAITING, () => disconnectAfter(a, connecting));
    } catch (e) {
      // A disconnect waits for pending requests: against a broker that does not answer, a request timeout. Not awaited.
      if (!(e instanceof AdjunctError && e.code === 'STOPPED_WHILE_STARTING')) disconnectAfter(a, connecting);
      throw e;
    }
    if (closeAfter) void a.disconnect().catch(() => undefined);
  };
  const attempt = async (): Promise<void> => {
    await connect(probe(), true);
    await connect(admin, false);
  };
  try {
    await waitAtStartup(WAITING, attempt, isRetriableAtKafkaStartup, o);
  } catch (e) {
    if (e instanceof RetriesExhaustedError) {
      throw new AdjunctError(gaveUpText(CONNECTING, e, kafkaErrorText(e.cause)), {
        code: 'KAFKA_UNAVAILABLE',
        stage: 'worker',
        cause: e.cause,
      });
    }
    if (e instanceof AdjunctError) throw e;
    if (isRefusedLogin(e) || isTlsRefused(e)) {
      const what = isRefusedLogin(e) ? 'the login was refused' : 'the TLS handshake failed';
      throw new AdjunctError(`${CONNECTING}: ${what} (${kafkaErrorText(e)})`, { code: 'CONFIG_INVALID', stage: 'config', cause: e });
    }
    throw new AdjunctError(`${CONNECTING}: ${kafkaErrorText(e)}`, { code: 'WORKER_FAILED', stage: 'worker', cause: e });
  }
}

/** An `onRetry` that warns once per start-up retry (attempt, delay and the error). */
export function warnKafkaStartupRetry(log: Logger): KafkaStartupOptions['onRetry'] {
  return (e, attempt, delayMs) => log.warn({ attempt, delayMs, err: kafkaErrorText(e) }, 'Kafka not ready at start-up: retrying');
}
