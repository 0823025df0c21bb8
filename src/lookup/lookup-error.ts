import { AdjunctError, AdjunctErrorOptions, ErrorCode } from '../errors';

/** A read-side failure (unknown store, wrong store kind, bad lookup input); stage `lookup`. */
export class LookupError extends AdjunctError {
  constructor(message: string, options: Partial<AdjunctErrorOptions> & { code: ErrorCode }) {
    super(message, { stage: 'lookup', ...options });
  }
}

/** The store is not in the catalog (code UNKNOWN_STORE). */
export function unknownStore(store: string): LookupError {
  return new LookupError(`unknown store ${JSON.stringify(store)} (not in the catalog)`, { code: 'UNKNOWN_STORE', context: { store } });
}

/** The operation does not exist for the store's kind (code WRONG_STORE_KIND). */
export function wrongKind(store: string, kind: string, operation: string): LookupError {
  return new LookupError(`${operation} is not supported on ${kind} store ${JSON.stringify(store)}`, {
    code: 'WRONG_STORE_KIND',
    context: { store, kind, operation },
  });
}

/** Bad input to a lookup (code INVALID_ARGUMENT). */
export function invalidLookupArgument(message: string, context: Record<string, unknown> = {}): LookupError {
  return new LookupError(message, { code: 'INVALID_ARGUMENT', context });
}

/** A read found its generation's table gone or not open yet, and reading the catalog again did not help (code TABLE_MISSING). */
export function tableGone(store: string, table: string | undefined, cause: unknown): LookupError {
  return new LookupError(
    `store ${JSON.stringify(store)}: its table ${table ?? '(unknown)'} cannot be read: dropped (a rebuild or rollback replaced its generation) or not created yet`,
    { code: 'TABLE_MISSING', retriable: true, cause, context: { store, table } },
  );
}
