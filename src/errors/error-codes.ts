/** How one error code surfaces: HTTP status of a reply, CLI exit code, and whether retrying may succeed. */
export interface ErrorCodeInfo {
  /** HTTP status of an API reply carrying this code. */
  readonly http: 400 | 404 | 409 | 500 | 503;
  /** Exit code of the CLI (see ExitCode): 1 failed, 2 invalid configuration, 3 not found, 4 unavailable. */
  readonly exit: 1 | 2 | 3 | 4;
  /** Whether retrying the same operation may succeed (the default of AdjunctError.retriable). */
  readonly retriable: boolean;
  /** What the code means. */
  readonly meaning: string;
}

const code = (http: ErrorCodeInfo['http'], exit: ErrorCodeInfo['exit'], retriable: boolean, meaning: string): ErrorCodeInfo => ({
  http,
  exit,
  retriable,
  meaning,
});

/** Every error code adjunct raises, with its HTTP status, CLI exit code and retriable flag (one table, used by the HTTP API and the CLI). */
export const ERROR_CODES = {
  // Configuration and input
  CONFIG_INVALID: code(400, 2, false, 'the configuration is invalid'),
  INVALID_IDENTIFIER: code(400, 2, false, 'an identifier or table option failed validation before any CQL was built'),
  INVALID_ARGUMENT: code(400, 1, false, 'bad input to a store or lookup operation'),
  WRONG_STORE_KIND: code(400, 1, false, 'the operation does not exist for this kind of store'),
  COUNT_NOT_ENABLED: code(400, 1, false, 'counting is not enabled for this store'),
  // Not found
  NOT_FOUND: code(404, 3, false, 'no value for that key'),
  UNKNOWN_STORE: code(404, 3, false, 'the store is not in the catalog'),
  UNKNOWN_PIPELINE: code(404, 3, false, 'no pipeline of that name'),
  // State conflicts
  NO_PREVIOUS_GENERATION: code(409, 1, false, 'no previous generation to roll back to'),
  PIPELINE_NOT_FAILED: code(409, 1, false, 'restart applies only to a FAILED pipeline'),
  SWITCH_CONFLICT: code(409, 1, true, 'a generation switch lost a race; state changed underneath'),
  STORE_SHAPE_MISMATCH: code(409, 2, false, 'the store exists with another kind, scope or serde'),
  TABLE_OWNED: code(409, 2, false, "the store's base table belongs to another store or deployment (adjunct_table_owners)"),
  DROP_REFUSED: code(409, 1, false, 'a table was not dropped: not owned, or its generation is current or being built'),
  GENERATION_RETIRED: code(409, 1, true, 'the generation may no longer be written (being dropped, dropped or cancelled)'),
  // Bad records (tolerance applies)
  BAD_RECORD: code(500, 1, false, 'a record that cannot be processed'),
  DECODE_FAILED: code(500, 1, false, 'record bytes could not be decoded'),
  UNKNOWN_SCHEMA: code(500, 1, false, 'the record names a schema id the registry does not know'),
  SCHEMA_FORMAT_MISMATCH: code(500, 1, false, "the record's schema is of another format than the converter"),
  BAD_ENVELOPE: code(500, 1, false, 'the record is not a valid Debezium envelope'),
  MISSING_FIELD: code(500, 1, false, 'a field the extractor needs is missing'),
  VALUE_TOO_DEEP: code(500, 1, false, 'an extracted key or value nests deeper than MAX_VALUE_DEPTH objects/arrays'),
  BAD_TIMESTAMP: code(500, 1, false, 'the record timestamp is invalid'),
  RECORD_REJECTED: code(500, 1, false, 'the store rejected this one record (too large, invalid for the column)'),
  VERSION_LINK_REFUSED: code(
    500,
    1,
    false,
    'edge layout: the store refused a version row that later versions of its key may already link to; the pipeline stops instead of dead-lettering it',
  ),
  TYPED_COLUMN_MISMATCH: code(500, 1, false, 'a field value does not fit its typed column'),
  TYPED_COLUMN_INCOMPATIBLE: code(500, 1, false, "the record's schema changed the type of a field that has a typed column"),
  TYPED_COLUMN_SCHEMA: code(500, 1, false, "typed columns cannot be derived from the record's schema"),
  // Infrastructure (retriable: the pipeline stalls and resumes by itself)
  CASSANDRA_UNAVAILABLE: code(503, 4, true, 'Cassandra is unreachable, overloaded or timing out'),
  KAFKA_UNAVAILABLE: code(503, 4, true, 'a Kafka broker or the group coordinator did not answer in time (retried with backoff)'),
  REGISTRY_UNAVAILABLE: code(503, 4, true, 'the schema registry is unreachable'),
  SCHEMA_DISAGREEMENT: code(503, 4, true, 'Cassandra nodes do not agree on the schema yet'),
  READY_TIMEOUT: code(503, 4, true, 'the store did not become READY in time'),
  TABLE_MISSING: code(
    503,
    4,
    true,
    "a write or lookup found its generation's table gone: the worker re-follows the catalog, a lookup reads it again",
  ),
  // Infrastructure (not retriable by a plain retry, but an operator can fix it)
  KEYSPACE_NOT_FOUND: code(500, 1, false, 'the keyspace does not exist and autoCreate is off'),
  TABLE_NOT_FOUND: code(500, 1, false, 'the table does not exist and autoCreate is off'),
  SCHEMA_OUTDATED: code(500, 1, false, 'a table lacks a column this version needs and table creation is off'),
  BUCKETS_UNKNOWN: code(500, 1, false, 'a bucketed table is read or written without the number of buckets it was written with'),
  CASSANDRA_ERROR: code(500, 1, false, 'Cassandra refused the request'),
  STORE_ERROR: code(500, 1, false, 'a store-level failure'),
  STORE_CLOSED: code(500, 1, false, 'the store was closed'),
  CATALOG_ERROR: code(500, 1, false, 'the store catalog is inconsistent'),
  UNKNOWN_SERDE: code(500, 1, false, 'the catalog names a serde this reader does not know'),
  LOOKUP_CLOSED: code(500, 1, false, 'the lookup was closed'),
  WORKER_NOT_STARTED: code(503, 4, true, 'the worker is not started yet'),
  STOPPED_WHILE_STARTING: code(503, 1, false, 'the worker was asked to stop while it was starting (after a signal the CLI exits 0)'),
  // Pipeline lifecycle
  RETRIES_EXHAUSTED: code(503, 4, true, 'retries gave up (shutdown or timeout)'),
  STALL_TIMEOUT: code(503, 4, false, 'the pipeline stalled on an unavailable dependency for longer than errors.stallTimeout'),
  DLQ_FAILED: code(500, 1, false, 'a record could not be written to the dead-letter queue'),
  DLQ_UNAVAILABLE: code(503, 4, false, 'the dead-letter queue topic is missing and could not be created'),
  OFFSET_OUT_OF_RANGE: code(500, 1, false, 'records were deleted by retention before the store saw them'),
  CONSUMER_CRASH: code(500, 1, false, 'the Kafka consumer crashed'),
  RELOAD_FAILED: code(500, 1, false, 'a reload could not complete'),
  RESUBSCRIBE_FAILED: code(500, 1, false, "re-subscribing to a topic pattern's new matches failed"),
  WRITER_OPEN_FAILED: code(500, 1, false, "a partition's writer could not be opened (not a dependency outage, which stalls and retries)"),
  INTERNAL: code(500, 1, false, 'an unexpected internal error (the public form of any error that is not an AdjunctError)'),
  WORKER_FAILED: code(500, 1, false, 'the worker failed'),
} as const satisfies Record<string, ErrorCodeInfo>;

/** A stable machine-readable error code (a key of ERROR_CODES). */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Every error code, in table order. */
export const ALL_ERROR_CODES = Object.keys(ERROR_CODES) as ErrorCode[];
