import { BadRecordError, ErrorStage } from '../errors';
import { protobufLibrary } from './schema-libraries';

/** The Confluent wire format header: magic byte 0 and a 4-byte big-endian schema id before the serialised body. */
export interface WireRecord {
  schemaId: number;
  body: Buffer;
}

/** Splits Confluent wire-format bytes into schema id and body; a wrong magic byte or a short record is a bad record. */
export function readWireHeader(bytes: Buffer, format: string, stage: ErrorStage): WireRecord {
  if (bytes.length < 5)
    throw new BadRecordError(`${format} record too short (${bytes.length} bytes) for the Confluent wire format`, {
      stage,
      code: 'DECODE_FAILED',
    });
  if (bytes[0] !== 0)
    throw new BadRecordError(`wrong magic byte ${bytes[0]} (expected 0, Confluent wire format)`, { stage, code: 'DECODE_FAILED' });
  return { schemaId: bytes.readInt32BE(1), body: bytes.subarray(5) };
}

/** Longest message-index path accepted (nesting depth of the message in its .proto file). */
const MAX_INDEXES = 64;

/**
 * Reads the Protobuf message indexes that follow the schema id: a zigzag varint count, then that many zigzag varint
 * indexes (the path of the message type in the .proto file); a count of 0 is the shorthand for `[0]`, the first message.
 */
export function readMessageIndexes(body: Buffer, stage: ErrorStage, schemaId: number): { indexes: number[]; payload: Buffer } {
  const reader = protobufLibrary().Reader.create(body);
  try {
    const count = reader.sint32();
    if (count < 0 || count > MAX_INDEXES) throw new Error(`message index count ${count} out of range`);
    const indexes = count === 0 ? [0] : Array.from({ length: count }, () => reader.sint32());
    if (indexes.some((i) => i < 0)) throw new Error(`negative message index in [${indexes.join(', ')}]`);
    return { indexes, payload: body.subarray(reader.pos) };
  } catch (e) {
    throw new BadRecordError(`Protobuf message indexes unreadable (schema ${schemaId}): ${(e as Error).message}`, {
      stage,
      code: 'DECODE_FAILED',
      cause: e,
      context: { schemaId },
    });
  }
}
