import { AdjunctError, ErrorStage, StoreError } from './adjunct-error';

/** DataStax driver error classes / server codes that a retry may fix. */
const RETRIABLE_DRIVER_ERRORS = new Set([
  'NoHostAvailableError',
  'OperationTimedOutError',
  'BusyConnectionError',
]);

/** Cassandra server error codes (native protocol) that are transient. */
const RETRIABLE_SERVER_CODES = new Set([
  0x1000, // unavailable
  0x1001, // overloaded
  0x1002, // is_bootstrapping
  0x1100, // write_timeout
  0x1200, // read_timeout
  0x1300, // read_failure
  0x1500, // write_failure
]);

/** Socket error codes of a connection that dropped or never came up. */
const RETRIABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/** Decides whether a cassandra-driver error is retriable (policy, not guesswork: by class and server code). */
export function isRetriableCassandraError(e: unknown): boolean {
  if (e instanceof AdjunctError) return e.retriable;
  if (!(e instanceof Error)) return false;
  if (RETRIABLE_DRIVER_ERRORS.has(e.name) || RETRIABLE_DRIVER_ERRORS.has(e.constructor?.name)) return true;
  // Server errors carry a numeric protocol code, socket errors a string one.
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'number') return RETRIABLE_SERVER_CODES.has(code);
  return typeof code === 'string' && RETRIABLE_SOCKET_CODES.has(code);
}

/** Wraps any Cassandra failure into a StoreError, classified retriable or fatal. */
export function wrapCassandraError(e: unknown, what: string, stage: ErrorStage = 'store', context: Record<string, unknown> = {}): AdjunctError {
  if (e instanceof AdjunctError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return new StoreError(`${what}: ${msg}`, {
    code: 'CASSANDRA_ERROR',
    retriable: isRetriableCassandraError(e),
    stage,
    cause: e,
    context: { ...context, driverError: e instanceof Error ? e.constructor?.name : undefined },
  });
}
