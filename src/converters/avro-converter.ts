import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { LRUCache } from 'lru-cache';
import { AdjunctError, BadRecordError, ErrorStage } from '../errors';
import { Converter } from './converter';

/** How long a schema id the registry does not know is remembered as unknown (no registry call meanwhile). */
export const SCHEMA_MISS_TTL_MS = 30_000;
/** Most unknown schema ids remembered at once. */
const MAX_SCHEMA_MISSES = 1024;

/**
 * Avro in the Confluent wire format (magic byte 0, 4-byte schema id, Avro body); schemas fetched from the registry and
 * cached. Unknown schema ids are cached as misses for SCHEMA_MISS_TTL_MS, so a burst of records with one bad id makes
 * one registry call, not one per record.
 */
export class AvroConverter implements Converter {
  readonly name = 'avro';
  private readonly misses: LRUCache<number, string>;

  constructor(
    private readonly registry: SchemaRegistry,
    private readonly stage: ErrorStage,
    missTtlMs = SCHEMA_MISS_TTL_MS,
  ) {
    this.misses = new LRUCache<number, string>({ max: MAX_SCHEMA_MISSES, ttl: missTtlMs });
  }

  async decode(bytes: Buffer | null): Promise<unknown> {
    if (bytes === null) return null;
    if (bytes.length < 5) throw new BadRecordError(`Avro record too short (${bytes.length} bytes) for the Confluent wire format`, { stage: this.stage, code: 'DECODE_FAILED' });
    if (bytes[0] !== 0) throw new BadRecordError(`wrong magic byte ${bytes[0]} (expected 0, Confluent wire format)`, { stage: this.stage, code: 'DECODE_FAILED' });
    const schemaId = bytes.readInt32BE(1);
    const missed = this.misses.get(schemaId);
    if (missed !== undefined) {
      throw new BadRecordError(`unknown schema id ${schemaId}: ${missed} (remembered for ${this.misses.ttl} ms)`, { stage: this.stage, code: 'UNKNOWN_SCHEMA', context: { schemaId } });
    }
    try {
      return await this.registry.decode(bytes);
    } catch (e) {
      const err = classifyRegistryError(e, this.stage, schemaId);
      if (err.code === 'UNKNOWN_SCHEMA') this.misses.set(schemaId, (e as Error)?.message ?? 'not found');
      throw err;
    }
  }
}

/** Maps a registry/avsc failure to a bad record (unknown schema id, truncated body) or a retriable error (registry unreachable, 5xx). */
export function classifyRegistryError(e: unknown, stage: ErrorStage, schemaId: number): AdjunctError {
  const status = (e as { status?: number }).status;
  const msg = (e as Error)?.message ?? String(e);
  if (status === 404 || status === 422 || /not found/i.test(msg)) {
    return new BadRecordError(`unknown schema id ${schemaId}: ${msg}`, { stage, code: 'UNKNOWN_SCHEMA', cause: e, context: { schemaId } });
  }
  if ((status !== undefined && status >= 500) || /ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|timeout/i.test(msg)) {
    return new AdjunctError(`schema registry unavailable while fetching schema ${schemaId}: ${msg}`, { code: 'REGISTRY_UNAVAILABLE', retriable: true, stage, cause: e, context: { schemaId } });
  }
  return new BadRecordError(`Avro decode failed (schema ${schemaId}): ${msg}`, { stage, code: 'DECODE_FAILED', cause: e, context: { schemaId } });
}
