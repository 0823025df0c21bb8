import { Clock, systemClock } from '../clock/clock';
import { AdjunctError, describeError, PipelineStage, RetriesExhaustedError, withRetry } from '../errors';
import { Logger } from '../observability/logger';

/** Kafka protocol errors of a group coordinator that is moving, loading or not elected yet (codes 14, 15, 16). */
const COORDINATOR_ERROR_TYPES = new Set(['GROUP_LOAD_IN_PROGRESS', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'NOT_COORDINATOR_FOR_GROUP']);
const COORDINATOR_ERROR_CODES = new Set([14, 15, 16]);

/** The error kafkajs wrapped (its retrier's `originalError`, or `cause`), if any. */
function innerError(e: object): unknown {
  const x = e as { originalError?: unknown; cause?: unknown };
  return x.originalError ?? x.cause;
}

/** The error and the ones it wraps (innerError), outermost first: kafkajs's retrier keeps the last failure. */
export function kafkaErrorChain(e: unknown): Error[] {
  const out: Error[] = [];
  for (let x = e; x instanceof Error && out.length < 5 && !out.includes(x); x = innerError(x)) out.push(x);
  return out;
}

/** The error of e's chain (kafkaErrorChain) whose kafkajs protocol error `type` is one of `types`, if any. */
export function kafkaErrorOfType(e: unknown, types: ReadonlySet<string>): Error | undefined {
  return kafkaErrorChain(e).find((x) => types.has(String((x as { type?: unknown }).type)));
}

/**
 * True for a Kafka failure a later attempt may fix: a coordinator that is loading, moving or not found yet, or any
 * error kafkajs marks retriable (leader moving, connection refused); also when kafkajs's own retries gave up on one.
 */
export function isRetriableKafkaError(e: unknown, depth = 0): boolean {
  if (!(e instanceof Error) || depth > 3) return false;
  if (e instanceof AdjunctError) return e.retriable;
  const x = e as { type?: unknown; code?: unknown; retriable?: unknown };
  if (typeof x.type === 'string' && COORDINATOR_ERROR_TYPES.has(x.type)) return true;
  if (e.name === 'KafkaJSProtocolError' && typeof x.code === 'number' && COORDINATOR_ERROR_CODES.has(x.code)) return true;
  if (e.name === 'KafkaJSGroupCoordinatorNotFound') return true;
  if (e.name.startsWith('KafkaJS') && x.retriable === true) return true;
  const inner = innerError(e);
  return inner !== undefined && inner !== e && isRetriableKafkaError(inner, depth + 1);
}

/** Group errors after which kafkajs re-joins: this member's assignment may be gone (kafkajs `isRebalancing`, plus membership loss). */
const REJOIN_ERROR_TYPES = new Set([
  'REBALANCE_IN_PROGRESS',
  'NOT_COORDINATOR_FOR_GROUP',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
]);

/** True when a heartbeat or commit failed because the group is rebalancing or no longer knows this member. */
export function isRejoinError(e: unknown): boolean {
  return kafkaErrorOfType(e, REJOIN_ERROR_TYPES) !== undefined;
}

/** Bounds of a Kafka admin retry loop. */
export interface KafkaRetryOptions {
  /** Give up after this long (default 60 s). */
  timeoutMs?: number;
  /** Cap of one backoff delay (default 2 s). */
  maxDelayMs?: number;
  /** Time source (default: the system clock). */
  clock?: Clock;
  /** Told about every retriable failure before its backoff (e.g. a warning log). */
  onRetry?: (e: unknown, attempt: number, delayMs: number) => void;
  /** Ends the retries after a failed attempt (the worker is stopping, or gives its start up). */
  shouldStop?: () => boolean;
}

/** Default bound of a Kafka admin retry loop: longer than a coordinator election or a partition leader move. */
export const KAFKA_RETRY_TIMEOUT_MS = 60_000;

/**
 * Runs a Kafka admin call, retrying retriable failures (a coordinator not ready yet, a leader moving) with backoff,
 * and fails with KAFKA_UNAVAILABLE naming `what` once the bound is reached; other failures are thrown at once.
 */
export async function withKafkaRetry<T>(what: string, fn: () => Promise<T>, o: KafkaRetryOptions = {}): Promise<T> {
  const timeoutMs = o.timeoutMs ?? KAFKA_RETRY_TIMEOUT_MS;
  try {
    return await withRetry(fn, {
      timeoutMs,
      maxDelayMs: o.maxDelayMs ?? 2000,
      initialDelayMs: 200,
      isRetriable: (e) => isRetriableKafkaError(e),
      onRetry: o.onRetry,
      shouldStop: o.shouldStop,
      clock: o.clock ?? systemClock,
    });
  } catch (e) {
    if (!(e instanceof RetriesExhaustedError)) throw e;
    // Ended by a stop, not by Kafka: the caller's stop path, never a failure of the pipeline.
    if (o.shouldStop?.())
      throw new AdjunctError(`stopped while ${what}`, { code: 'STOPPED_WHILE_STARTING', stage: 'consume', cause: e.cause });
    throw new AdjunctError(`${what} failed, Kafka unavailable: ${e.message}`, {
      code: 'KAFKA_UNAVAILABLE',
      stage: 'consume',
      cause: e.cause,
    });
  }
}

/**
 * The call's result, or KAFKA_UNAVAILABLE naming `what` once it has taken longer than `timeoutMs` (a request that never
 * settles); `onExpired` is told when that happens (the call itself goes on and may still land). 0: no bound.
 */
export function withKafkaTimeout<T>(
  what: string,
  call: Promise<T>,
  timeoutMs: number,
  o: { stage?: PipelineStage; onExpired?: () => void } = {},
): Promise<T> {
  if (timeoutMs <= 0) return call;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      o.onExpired?.();
      reject(new AdjunctError(`${what} did not answer within ${timeoutMs} ms`, { code: 'KAFKA_UNAVAILABLE', stage: o.stage ?? 'consume' }));
    }, timeoutMs);
    timer.unref();
  });
  return Promise.race([call, expired]).finally(() => clearTimeout(timer));
}

/** An `onRetry` that warns once per retry of `what` (with the attempt, the delay and the error). */
export function warnKafkaRetry(log: Logger, what: string, context: Record<string, unknown> = {}): KafkaRetryOptions['onRetry'] {
  return (e, attempt, delayMs) =>
    log.warn({ ...context, attempt, delayMs, err: describeError(e) }, `Kafka not ready for ${what}: retrying`);
}
