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
  // The driver refuses to encode a value that does not fit the column type before sending anything. Only its value
  // encoders' wordings count: any other TypeError (a bug, a bad type name, an unguessable hint) is not the record's fault.
  return (e.name === 'TypeError' || e.constructor?.name === 'TypeError') && DRIVER_VALUE_ENCODING.test(e.message);
}

/** cassandra-driver's encoder messages for a value that does not fit its column (lib/encoder.js, 4.x). */
const DRIVER_VALUE_ENCODING =
  /^(?:Expected (?:Number|string representation|Date|String|vector)|Not a valid (?!type\b)|Invalid (?:date|string representation)|Local(?:Date|Time) could not be parsed|A (?:collection|map) can't contain|Cannot encode empty array)/;

/** The server's answer to a statement on a table that does not exist (dropped under the writer): Cassandra 3 and 4+/5 wording. */
const MISSING_TABLE = /unconfigured table|table \S+ does not exist/i;

/** True when Cassandra answered that the statement's table does not exist (an infrastructure state, never the record's fault). */
export function isMissingTable(e: unknown): boolean {
  if (e instanceof AdjunctError) return e.code === 'TABLE_MISSING';
  // A prepared statement whose table was dropped: the driver re-prepares on each host, and every host answers "unconfigured table".
  const inner = hostErrors(e);
  if (inner.length > 0) return inner.every(([, x]) => isMissingTable(x));
  if (e instanceof Error && e.name === 'NoHostAvailableError') return false;
  return e instanceof Error && (e as { code?: unknown }).code === 0x2200 && MISSING_TABLE.test(e.message);
}

/** The server's answer to a statement on a keyspace that does not exist (Cassandra 4+/5 wording, quoted or not). */
const MISSING_KEYSPACE = /keyspace \S+ does not exist/i;

/** True when Cassandra answered that the statement's keyspace does not exist (nothing was ever written there, or it was dropped). */
export function isMissingKeyspace(e: unknown): boolean {
  if (e instanceof AdjunctError) return e.cause !== undefined && e.cause !== e && isMissingKeyspace(e.cause);
  const inner = hostErrors(e);
  if (inner.length > 0) return inner.every(([, x]) => isMissingKeyspace(x));
  return e instanceof Error && (e as { code?: unknown }).code === 0x2200 && MISSING_KEYSPACE.test(e.message);
}

/** A replica's answer for a table its schema lists before the table's store is open on it (a server error). */
const STORE_NOT_OPEN = /Unknown CF [0-9a-f-]{36}/i;

/**
 * True when Cassandra answered that the table's store is not open on the replica yet: a table another client created
 * just now (seen about once in 12 opens when three clients create one table at once). Transient; the caller waits.
 */
export function isTableNotOpenYet(e: unknown): boolean {
  if (e instanceof AdjunctError) return e.cause !== undefined && e.cause !== e && isTableNotOpenYet(e.cause);
  const inner = hostErrors(e);
  if (inner.length > 0) return inner.some(([, x]) => isTableNotOpenYet(x));
  return e instanceof Error && STORE_NOT_OPEN.test(e.message);
}

/** Native-protocol code of "unprepared": the statement's id is unknown to the node. */
const UNPREPARED = 0x2500;

/**
 * True when a failure may mean the statement's table is gone: Cassandra says so, or an "unprepared" answer reached the
 * caller (the driver re-prepares transparently, so one that surfaces means the re-prepare failed too, as it does for a
 * dropped table). A caller checks the schema before acting on it.
 */
export function mayBeMissingTable(e: unknown): boolean {
  if (isMissingTable(e)) return true;
  if (e instanceof AdjunctError) return e.cause !== undefined && e.cause !== e && mayBeMissingTable(e.cause);
  const inner = hostErrors(e);
  const all = inner.length > 0 ? inner.map(([, x]) => x) : [e];
  return all.every((x) => x instanceof Error && ((x as { code?: unknown }).code === UNPREPARED || isMissingTable(x)));
}

/**
 * Each host's error of a driver "no host available" failure (empty for any other error). Hosts the driver skipped
 * (recorded as a string such as "Host considered as DOWN", or null) are left out: they say nothing about the statement.
 */
function hostErrors(e: unknown): [string, unknown][] {
  if (!(e instanceof Error) || e.name !== 'NoHostAvailableError') return [];
  return Object.entries((e as { innerErrors?: Record<string, unknown> }).innerErrors ?? {}).filter(([, x]) => x instanceof Error);
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
    const kinds = inner.map(([host, x]) => `${host}: ${errorKind(x)}`).join(', ');
    return inner.every(([, x]) => isServerAnswer(x))
      ? `every Cassandra host refused the statement (${kinds})`
      : `no Cassandra host answered (${kinds})`;
  }
  return (e instanceof Error ? e.message : String(e)).split('\n')[0];
}

/** True for an error the server answered with (a protocol error code), as against a socket or driver failure. */
function isServerAnswer(x: unknown): boolean {
  return x instanceof Error && typeof (x as { code?: unknown }).code === 'number';
}

/** A host's error in a few words: the server's answer (first line), a socket error's code (ECONNREFUSED), else the error's class. */
function errorKind(x: unknown): string {
  if (!(x instanceof Error)) return 'error';
  if (isServerAnswer(x)) return (x.message.split('\n')[0] || x.name).slice(0, 160);
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
