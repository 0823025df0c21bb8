import type { FastifyError, FastifyReply } from 'fastify';
import { AdjunctError } from '../errors';

/** HTTP status for an error: 400 bad input, 404 unknown store/pipeline, 409 state conflicts, 503 retriable, else 500. */
export function statusOf(e: unknown): number {
  const fe = e as Partial<FastifyError>;
  if (fe && fe.validation) return 400;
  if (e instanceof AdjunctError) {
    if (['INVALID_ARGUMENT', 'WRONG_STORE_KIND', 'INVALID_IDENTIFIER'].includes(e.code)) return 400;
    if (['UNKNOWN_STORE', 'UNKNOWN_PIPELINE', 'NOT_FOUND'].includes(e.code)) return 404;
    if (['NO_PREVIOUS_GENERATION', 'SWITCH_CONFLICT'].includes(e.code)) return 409;
    if (e.retriable) return 503;
    return 500;
  }
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) return fe.statusCode;
  return 500;
}

/** Error body: a stable code and a human message. */
export function errorBody(e: unknown): { error: string; message: string } {
  const fe = e as Partial<FastifyError>;
  if (fe?.validation) return { error: 'BAD_REQUEST', message: fe.message ?? 'bad request' };
  if (e instanceof AdjunctError) return { error: e.code, message: e.message };
  if (typeof fe?.statusCode === 'number' && fe.statusCode < 500) return { error: fe.code ?? 'BAD_REQUEST', message: fe.message ?? 'bad request' };
  return { error: 'INTERNAL', message: 'internal error' };
}

/** Sends the error reply for any thrown value. */
export function sendError(reply: FastifyReply, e: unknown): FastifyReply {
  return reply.code(statusOf(e)).send(errorBody(e));
}
