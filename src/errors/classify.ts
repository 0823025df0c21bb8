import { AdjunctError, StoreError } from './adjunct-error';
import { ErrorCode } from './error-codes';
import { ErrorStage } from './error-stage';

/** DataStax driver error classes / server codes that a retry may fix. */
const RETRIABLE_DRIVER_ERRORS = new Set(['NoHostAvailableError', 'OperationTimedOutError', 'BusyConnectionError']);

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

/** Server messages of an `invalid` (0x2200) answer that concern the one record, not the table or the cluster. */
const RECORD_SPECIFIC_INVALID = /too large|longer than (the )?maximum|exceeds the maximum|oversized/i;

/** True when Cassandra refused this one record (too large, a key over 64 KiB), which no retry or operator action fixes. */
export function isRecordRejectedByCassandra(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (code === 0x2200) return RECORD_SPECIFIC_INVALID.test(e.message);
  // The driver refuses to encode a value that does not fit the column type before sending anything.
  return e.name === 'TypeError' || e.constructor?.name === 'TypeError';
}

/** The server's answer to a statement on a table that does not exist (dropped under the writer): Cassandra 3 and 4+/5 wording. */
const MISSING_TABLE = /unconfigured table|table \S+ does not exist/i;

/** True when Cassandra answered that the statement's table does not exist (an infrastructure state, never the record's fault). */
export function isMissingTable(e: unknown): boolean {
  if (e instanceof AdjunctError) return e.code === 'TABLE_MISSING';
  return e instanceof Error && (e as { code?: unknown }).code === 0x2200 && MISSING_TABLE.test(e.message);
}

/** Codes of failures that belong to one record: error tolerance (DLQ or stop) applies to these and only these. */
const RECORD_FAILURE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'BAD_RECORD',
  'DECODE_FAILED',
  'UNKNOWN_SCHEMA',
  'SCHEMA_FORMAT_MISMATCH',
  'BAD_ENVELOPE',
  'MISSING_FIELD',
  'VALUE_TOO_DEEP',
  'BAD_TIMESTAMP',
  'INVALID_ARGUMENT',
  'RECORD_REJECTED',
  'TYPED_COLUMN_MISMATCH',
  'TYPED_COLUMN_INCOMPATIBLE',
  'TYPED_COLUMN_SCHEMA',
]);

/**
 * Kafka Connect's rule for sinks: tolerance applies to records (conversion, extraction, a write refused for this
 * record), never to the infrastructure. Anything else (unavailable, timeouts, dropped table, auth, schema mismatch)
 * is an infrastructure failure: the pipeline stalls and retries instead of dead-lettering.
 */
export function isRecordFailure(e: unknown): boolean {
  if (e instanceof AdjunctError) return RECORD_FAILURE_CODES.has(e.code);
  return false;
}

/**
 * One line naming a Cassandra driver failure without driver internals: for "no host available", each host with its
 * error's socket code or class (the driver's own message embeds the inner errors' stack traces); otherwise the first
 * line of the message.
 */
export function cassandraErrorText(e: unknown): string {
  if (e instanceof Error && e.name === 'NoHostAvailableError') {
    const inner = Object.entries((e as { innerErrors?: Record<string, unknown> }).innerErrors ?? {});
    if (inner.length === 0) return (e.message || 'no Cassandra host could be reached').split('\n')[0];
    return `no Cassandra host answered (${inner.map(([host, x]) => `${host}: ${errorKind(x)}`).join(', ')})`;
  }
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

/** A host's error in a word: a socket error's code (ECONNREFUSED), else the error's class. */
function errorKind(x: unknown): string {
  if (!(x instanceof Error)) return 'error';
  const code = (x as { code?: unknown }).code;
  return typeof code === 'string' ? code : x.name;
}

/** Wraps any Cassandra failure into a StoreError, classified retriable, record-specific or fatal. */
export function wrapCassandraError(
  e: unknown,
  what: string,
  stage: ErrorStage = 'store',
  context: Record<string, unknown> = {},
): AdjunctError {
  if (e instanceof AdjunctError) return e;
  const msg = cassandraErrorText(e);
  const missingTable = isMissingTable(e);
  const retriable = missingTable || isRetriableCassandraError(e);
  return new StoreError(`${what}: ${msg}`, {
    code: missingTable
      ? 'TABLE_MISSING'
      : retriable
        ? 'CASSANDRA_UNAVAILABLE'
        : isRecordRejectedByCassandra(e)
          ? 'RECORD_REJECTED'
          : 'CASSANDRA_ERROR',
    retriable,
    stage,
    cause: e,
    context: { ...context, driverError: e instanceof Error ? e.constructor?.name : undefined },
  });
}
