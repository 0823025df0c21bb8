import { AdjunctError, BadRecordError, ErrorStage } from '../errors';

/** Socket and timeout failures of a request (Node codes, mappersmith's `Timeout (N ms)`): the registry was not reached. */
const UNREACHED =
  /ECONN|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|EPIPE|ETIMEDOUT|socket hang up|timeout|timed out|network|fetch failed/i;

/**
 * Maps a registry failure while fetching schema `schemaId` to a bad record or an outage. Only the registry's own
 * answer that it does not know the id (HTTP 404, or 422) makes the record bad (UNKNOWN_SCHEMA); any other HTTP answer
 * (401/403 credentials refused, 429, 5xx, and mappersmith's status 400 for a request that never got an answer) and any
 * socket or timeout failure is REGISTRY_UNAVAILABLE, retriable: the pipeline stalls instead of dead-lettering every
 * record while the registry is down or refuses the worker. A schema fetched but unusable (it does not parse) is
 * DECODE_FAILED.
 */
export function classifyRegistryError(e: unknown, stage: ErrorStage, schemaId: number): AdjunctError {
  const status = (e as { status?: unknown }).status;
  const msg = (e as Error)?.message ?? String(e);
  if (status === 404 || status === 422) {
    return new BadRecordError(`unknown schema id ${schemaId}: ${msg}`, { stage, code: 'UNKNOWN_SCHEMA', cause: e, context: { schemaId } });
  }
  if (typeof status === 'number' || UNREACHED.test(msg) || typeof (e as { code?: unknown }).code === 'string') {
    const why = status === 401 || status === 403 ? `refused the credentials (HTTP ${status})` : 'unavailable';
    return new AdjunctError(`schema registry ${why} while fetching schema ${schemaId}: ${msg}`, {
      code: 'REGISTRY_UNAVAILABLE',
      retriable: true,
      stage,
      cause: e,
      context: { schemaId },
    });
  }
  return new BadRecordError(`schema ${schemaId} unusable: ${msg}`, { stage, code: 'DECODE_FAILED', cause: e, context: { schemaId } });
}
