import type { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import type { Type as ProtoType } from 'protobufjs';
import { LRUCache } from 'lru-cache';
import { BadRecordError, ErrorStage } from '../errors';
import { Converter } from './converter';
import { addWellKnownTypes, decodeToPlain, messageTypeAt } from './protobuf-message';
import { classifyRegistryError } from './registry-errors';
import { readMessageIndexes, readWireHeader } from './wire-format';
import { avscLibrary, protobufLibrary } from './schema-libraries';

/** Registry formats, named as in the config (`keyConverter` / `valueConverter`). */
export type RegistryFormat = 'avro' | 'json-schema' | 'protobuf';

/** A parsed schema as the registry client caches it: an avsc type, a JSON Schema validator, or a .proto file's first message. */
type ParsedSchema = Awaited<ReturnType<SchemaRegistry['getSchema']>>;

/** How long a schema id the registry does not know is remembered as unknown (no registry call meanwhile). */
export const SCHEMA_MISS_TTL_MS = 30_000;
/** Most unknown schema ids remembered at once. */
const MAX_SCHEMA_MISSES = 1024;

/** The registry's schemaType of each format. */
const SCHEMA_TYPES: Record<RegistryFormat, string> = { avro: 'AVRO', 'json-schema': 'JSON', protobuf: 'PROTOBUF' };

/** Which format a parsed schema is in (the registry client returns a different class per schemaType). */
function formatOf(schema: ParsedSchema): RegistryFormat {
  if (schema instanceof avscLibrary().Type) return 'avro';
  if ((schema as { message?: unknown }).message instanceof protobufLibrary().Type) return 'protobuf';
  return 'json-schema';
}

/**
 * Avro, JSON Schema and Protobuf in the Confluent wire format: magic byte 0, 4-byte schema id, then (Protobuf only) the
 * message indexes, then the body. Schemas are fetched from the registry by id, parsed and cached by
 * @kafkajs/confluent-schema-registry; every format goes through the same fetch, so one cache and one error mapping
 * apply to all three. A record whose schema is of another format than the configured one is a bad record.
 * Unknown schema ids are cached as misses for SCHEMA_MISS_TTL_MS, so a burst of records with one bad id makes one
 * registry call, not one per record.
 */
export class RegistryConverter implements Converter {
  private readonly misses: LRUCache<number, string>;

  constructor(
    readonly name: RegistryFormat,
    private readonly registry: SchemaRegistry,
    private readonly stage: ErrorStage,
    missTtlMs = SCHEMA_MISS_TTL_MS,
  ) {
    this.misses = new LRUCache<number, string>({ max: MAX_SCHEMA_MISSES, ttl: missTtlMs });
  }

  async decode(bytes: Buffer | null): Promise<unknown> {
    if (bytes === null) return null;
    const { schemaId, body } = readWireHeader(bytes, this.name, this.stage);
    const schema = await this.schemaFor(schemaId);
    const format = formatOf(schema);
    if (format !== this.name) {
      throw new BadRecordError(`schema id ${schemaId} has schemaType ${SCHEMA_TYPES[format]}, but the converter is ${this.name}`, {
        stage: this.stage,
        code: 'SCHEMA_FORMAT_MISMATCH',
        context: { schemaId },
      });
    }
    if (format === 'protobuf') return this.decodeProtobuf(schema as ParsedSchema & { message: ProtoType }, schemaId, body);
    try {
      return schema.fromBuffer(body);
    } catch (e) {
      throw this.bodyError(e, schemaId);
    }
  }

  /** The parsed schema of an id: from the client's cache, or fetched once from the registry; unknown ids are remembered. */
  private async schemaFor(schemaId: number): Promise<ParsedSchema> {
    const missed = this.misses.get(schemaId);
    if (missed !== undefined) {
      throw new BadRecordError(`unknown schema id ${schemaId}: ${missed} (remembered for ${this.misses.ttl} ms)`, {
        stage: this.stage,
        code: 'UNKNOWN_SCHEMA',
        context: { schemaId },
      });
    }
    try {
      return await this.registry.getSchema(schemaId);
    } catch (e) {
      const err = classifyRegistryError(e, this.stage, schemaId);
      if (err.code === 'UNKNOWN_SCHEMA') this.misses.set(schemaId, (e as Error)?.message ?? 'not found');
      throw err;
    }
  }

  private decodeProtobuf(schema: { message: ProtoType }, schemaId: number, body: Buffer): Record<string, unknown> {
    const { indexes, payload } = readMessageIndexes(body, this.stage, schemaId);
    addWellKnownTypes(schema.message.root);
    const type = messageTypeAt(schema.message, indexes);
    if (!type)
      throw new BadRecordError(`Protobuf message indexes [${indexes.join(', ')}] name no message in schema ${schemaId}`, {
        stage: this.stage,
        code: 'DECODE_FAILED',
        context: { schemaId },
      });
    try {
      return decodeToPlain(type, payload);
    } catch (e) {
      throw this.bodyError(e, schemaId);
    }
  }

  private bodyError(e: unknown, schemaId: number): BadRecordError {
    const paths = (e as { paths?: unknown }).paths;
    const where = Array.isArray(paths) && paths.length ? ` at ${JSON.stringify(paths).slice(0, 200)}` : '';
    return new BadRecordError(`${this.name} decode failed (schema ${schemaId}): ${(e as Error)?.message ?? String(e)}${where}`, {
      stage: this.stage,
      code: 'DECODE_FAILED',
      cause: e,
      context: { schemaId },
    });
  }
}
