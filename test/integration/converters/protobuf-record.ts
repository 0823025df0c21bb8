import { Type, Writer } from 'protobufjs';

/**
 * A Protobuf value in the Confluent wire format, as the Java serializer writes it: magic 0, schema id, message indexes
 * (the first top-level message as the shorthand `0`), then the message `type` encoded from `value`.
 */
export function protobufRecord(schemaId: number, indexes: number[], type: Type, value: Record<string, unknown>): Buffer {
  const w = Writer.create();
  if (indexes.length === 1 && indexes[0] === 0) w.sint32(0);
  else {
    w.sint32(indexes.length);
    for (const i of indexes) w.sint32(i);
  }
  const header = Buffer.alloc(5);
  header.writeInt32BE(schemaId, 1);
  return Buffer.concat([header, Buffer.from(w.finish()), Buffer.from(type.encode(type.create(value)).finish())]);
}
