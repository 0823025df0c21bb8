import { AdjunctError, BadRecordError, ErrorStage } from '../errors';

/** Maps a registry failure to a bad record (unknown schema id, unparsable schema) or a retriable error (registry unreachable, 5xx). */
export function classifyRegistryError(e: unknown, stage: ErrorStage, schemaId: number): AdjunctError {
  const status = (e as { status?: number }).status;
  const msg = (e as Error)?.message ?? String(e);
  if (status === 404 || status === 422 || /not found/i.test(msg)) {
    return new BadRecordError(`unknown schema id ${schemaId}: ${msg}`, { stage, code: 'UNKNOWN_SCHEMA', cause: e, context: { schemaId } });
  }
  if ((status !== undefined && status >= 500) || /ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|timeout/i.test(msg)) {
    return new AdjunctError(`schema registry unavailable while fetching schema ${schemaId}: ${msg}`, {
      code: 'REGISTRY_UNAVAILABLE',
      retriable: true,
      stage,
      cause: e,
      context: { schemaId },
    });
  }
  return new BadRecordError(`schema ${schemaId} unusable: ${msg}`, { stage, code: 'DECODE_FAILED', cause: e, context: { schemaId } });
}
