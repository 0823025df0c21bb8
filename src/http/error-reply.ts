import type { FastifyError } from 'fastify';
import { AdjunctError, ERROR_CODES, publicError } from '../errors';

/** HTTP status for an error: the code's status in ERROR_CODES (a retriable server fault is 503); validation 400; else 500. */
export function statusOf(e: unknown): number {
  const fe = e as Partial<FastifyError>;
  if (fe && fe.validation) return 400;
  if (e instanceof AdjunctError) {
    const status = ERROR_CODES[e.code].http;
    return status === 500 && e.retriable ? 503 : status;
  }
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
  if (typeof fe?.statusCode === 'number' && fe.statusCode < 500)
    return { error: fe.code ?? 'BAD_REQUEST', message: fe.message ?? 'bad request' };
  return { error: 'INTERNAL', message: 'internal error' };
}
