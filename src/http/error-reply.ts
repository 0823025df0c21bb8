import type { FastifyError } from 'fastify';
import { AdjunctError, publicError } from '../errors';

/** HTTP status of the AdjunctError codes that are not server faults (shared with the CLI's exit codes). */
export const ERROR_CODE_STATUS: ReadonlyMap<string, 400 | 404 | 409> = new Map<string, 400 | 404 | 409>([
  ['INVALID_ARGUMENT', 400],
  ['WRONG_STORE_KIND', 400],
  ['INVALID_IDENTIFIER', 400],
  ['UNKNOWN_STORE', 404],
  ['UNKNOWN_PIPELINE', 404],
  ['NOT_FOUND', 404],
  ['NO_PREVIOUS_GENERATION', 409],
  ['PIPELINE_NOT_FAILED', 409],
  ['SWITCH_CONFLICT', 409],
]);

/** HTTP status for an error: 400 bad input, 404 unknown store/pipeline, 409 state conflicts, 503 retriable, else 500. */
export function statusOf(e: unknown): number {
  const fe = e as Partial<FastifyError>;
  if (fe && fe.validation) return 400;
  if (e instanceof AdjunctError) return ERROR_CODE_STATUS.get(e.code) ?? (e.retriable ? 503 : 500);
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) return fe.statusCode;
  return 500;
}

/** Error body: a stable code and adjunct's own message (no driver internals, stack frames, paths or addresses). */
export function errorBody(e: unknown): { error: string; message: string } {
  const fe = e as Partial<FastifyError>;
  if (fe?.validation) return { error: 'BAD_REQUEST', message: fe.message ?? 'bad request' };
  if (e instanceof AdjunctError) {
    const p = publicError(e);
    return { error: p.code, message: p.message };
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode < 500) return { error: fe.code ?? 'BAD_REQUEST', message: fe.message ?? 'bad request' };
  return { error: 'INTERNAL', message: 'internal error' };
}
