import type { Admin } from 'kafkajs';
import { AdjunctError, describeError, RetriesExhaustedError } from '../errors';
import { isRetriableKafkaError } from '../kafka/kafka-retry';
import { Logger } from '../observability/logger';
import { connectAdmin } from './clients';
import { StartupWaitOptions, unlessStopped, waitAtStartup } from './startup-wait';

/** Bounds and hooks of the Kafka start-up wait. */
export type KafkaStartupOptions = StartupWaitOptions;

/** kafkajs failures of a broker that is not reachable or not answering yet (kafkajs's own retries may have given up on them). */
const UNREACHABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTimeout',
]);

/** What kafkajs throws (a plain Error) for a request on a broker whose connection attempt failed a moment ago. */
const BROKER_NOT_CONNECTED = /^Broker not connected$/;

/** A login the broker refused: wrong credentials or mechanism, which no retry fixes. */
function isRefusedLogin(e: unknown): boolean {
  return e instanceof Error && e.name === 'KafkaJSSASLAuthenticationError';
}

/**
 * True for a start-up failure a later attempt may fix: no broker reachable yet, a broker not answering, a coordinator
 * or metadata not ready; never a refused login.
 */
export function isRetriableAtKafkaStartup(e: unknown): boolean {
  if (!(e instanceof Error) || isRefusedLogin(e)) return false;
  if (UNREACHABLE.has(e.name) || isRetriableKafkaError(e)) return true;
  return e.constructor === Error && BROKER_NOT_CONNECTED.test(e.message);
}

/** What the wait is doing, for the error of a stop in its middle. */
const WAITING = 'waiting for Kafka at start-up';

/**
 * Connects the admin client and loads the broker list (connectAdmin), retrying while no broker answers, with backoff
 * (200 ms doubling to 2 s) until `timeoutMs` has passed, so a worker started before Kafka accepts connections waits
 * for it instead of exiting into a restart loop. Past the bound it fails with KAFKA_UNAVAILABLE naming the last
 * error; a refused login fails at once as a configuration error. `shouldStop` ends the wait within 100 ms, also
 * mid-attempt (the admin client is disconnected). A failed attempt's connections are closed before the next one.
 */
export async function connectKafkaAtStartup(admin: Admin, o: KafkaStartupOptions = {}): Promise<void> {
  const attempt = async (): Promise<void> => {
    try {
      await unlessStopped(connectAdmin(admin), o.shouldStop, WAITING, () => void admin.disconnect().catch(() => undefined));
    } catch (e) {
      // A failed attempt's connections are closed before the next one; a stopped one's were left to `abandoned` (a
      // disconnect waits for pending requests: against a broker that does not answer, a request timeout).
      if (!(e instanceof AdjunctError && e.code === 'STOPPED_WHILE_STARTING')) await admin.disconnect().catch(() => undefined);
      throw e;
    }
  };
  try {
    await waitAtStartup(WAITING, attempt, isRetriableAtKafkaStartup, o);
  } catch (e) {
    if (e instanceof RetriesExhaustedError) {
      const seconds = (e.elapsedMs / 1000).toFixed(1);
      throw new AdjunctError(
        `connecting to Kafka at start-up failed after ${e.attempts} attempts in ${seconds} s: ${describeError(e.cause)}`,
        { code: 'KAFKA_UNAVAILABLE', stage: 'worker', cause: e.cause },
      );
    }
    if (e instanceof AdjunctError) throw e;
    if (isRefusedLogin(e)) {
      throw new AdjunctError(`connecting to Kafka at start-up: the login was refused (${describeError(e)})`, {
        code: 'KAFKA_UNAVAILABLE',
        retriable: false,
        stage: 'config',
        cause: e,
      });
    }
    throw new AdjunctError(`connecting to Kafka at start-up: ${describeError(e)}`, { code: 'WORKER_FAILED', stage: 'worker', cause: e });
  }
}

/** An `onRetry` that warns once per start-up retry (attempt, delay and the error). */
export function warnKafkaStartupRetry(log: Logger): KafkaStartupOptions['onRetry'] {
  return (e, attempt, delayMs) => log.warn({ attempt, delayMs, err: describeError(e) }, 'Kafka not ready at start-up: retrying');
}
