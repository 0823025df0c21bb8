import { ERROR_CODES, ErrorCode } from './error-codes';
import { ErrorStage } from './error-stage';

/** Options accepted by every AdjunctError. */
export interface AdjunctErrorOptions {
  /** Stable machine-readable code, e.g. `INVALID_IDENTIFIER` (a key of ERROR_CODES). */
  code: ErrorCode;
  /** Whether retrying the same operation may succeed (default: the code's flag in ERROR_CODES). */
  retriable?: boolean;
  /** Stage of the pipeline the error belongs to. */
  stage?: ErrorStage;
  /** The underlying error. */
  cause?: unknown;
  /** Where it happened: topic/partition/offset, YAML path, store name… */
  context?: Record<string, unknown>;
}

/** Root of adjunct's typed error taxonomy: every error carries code, retriable, stage and cause. */
export class AdjunctError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly stage?: ErrorStage;
  readonly context: Record<string, unknown>;
  override readonly cause?: unknown;

  constructor(message: string, options: AdjunctErrorOptions) {
    super(message);
    this.name = new.target.name;
    this.code = options.code;
    this.retriable = options.retriable ?? ERROR_CODES[options.code].retriable;
    this.stage = options.stage;
    this.cause = options.cause;
    this.context = options.context ?? {};
  }
}

/** A configuration problem (YAML, options, identifiers); never retriable. */
export class ConfigError extends AdjunctError {
  constructor(message: string, options: Partial<AdjunctErrorOptions> = {}) {
    super(message, { code: 'CONFIG_INVALID', stage: 'config', ...options, retriable: false });
  }
}

/** An identifier or table option that failed validation before any CQL was built. */
export class InvalidIdentifierError extends AdjunctError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, { code: 'INVALID_IDENTIFIER', stage: 'schema', retriable: false, context });
  }
}

/** Bad input to a store operation (null key, bad timestamp, unserialisable value). */
export class InvalidArgumentError extends AdjunctError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super(message, { code: 'INVALID_ARGUMENT', stage: 'store', retriable: false, context });
  }
}

/** A store-level failure (Cassandra error, missing keyspace…); `retriable` follows the driver error class. */
export class StoreError extends AdjunctError {
  constructor(message: string, options: Partial<AdjunctErrorOptions> = {}) {
    super(message, { code: 'STORE_ERROR', stage: 'store', ...options });
  }
}

/** A record that cannot be processed (undecodable bytes, extractor failure): goes to the DLQ or stops the worker. */
export class BadRecordError extends AdjunctError {
  constructor(message: string, options: Partial<AdjunctErrorOptions> & { stage: ErrorStage }) {
    super(message, { code: 'BAD_RECORD', ...options, retriable: false });
  }
}

/** Returns true if the value is an AdjunctError. */
export function isAdjunctError(e: unknown): e is AdjunctError {
  return e instanceof AdjunctError;
}

/** True when `e`, or an error in its cause chain, is a start-up step that a stop ended (STOPPED_WHILE_STARTING). */
export function isStoppedWhileStarting(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c !== undefined && c !== null && depth < 8; depth++) {
    if (isAdjunctError(c) && c.code === 'STOPPED_WHILE_STARTING') return true;
    c = (c as { cause?: unknown }).cause;
  }
  return false;
}

/** A short one-line description of any thrown value, safe for logs. */
export function describeError(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** `e` as an AdjunctError (tagged with `stage` when it has none); any other thrown value becomes `wrap(message, cause)`. */
export function asAdjunctError(e: unknown, wrap: (message: string, cause: unknown) => AdjunctError, stage?: ErrorStage): AdjunctError {
  if (!(e instanceof AdjunctError)) return wrap(describeError(e), e);
  if (e.stage || !stage) return e;
  return new AdjunctError(e.message, { code: e.code, retriable: e.retriable, stage, cause: e.cause, context: e.context });
}
