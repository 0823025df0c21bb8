import { Writer } from 'protobufjs';
import { BadRecordError } from '../../src/errors';
import { readMessageIndexes, readWireHeader } from '../../src/converters/wire-format';

/** Confluent message indexes as the Java serializer writes them: zigzag varint count, then zigzag varint indexes; [0] as a single 0. */
function indexBytes(indexes: number[]): Buffer {
  const w = Writer.create();
  if (indexes.length === 1 && indexes[0] === 0) w.sint32(0);
  else {
    w.sint32(indexes.length);
    for (const i of indexes) w.sint32(i);
  }
  return Buffer.from(w.finish());
}

describe('Confluent wire format', () => {
  it('splits magic byte, schema id and body', () => {
    const bytes = Buffer.from([0, 0, 0, 1, 2, 9, 8]);
    const r = readWireHeader(bytes, 'avro', 'value-convert');
    expect(r.schemaId).toBe(258);
    expect([...r.body]).toEqual([9, 8]);
  });

  it('rejects a wrong magic byte and short records as bad records', () => {
    expect(() => readWireHeader(Buffer.from([1, 0, 0, 0, 1, 5]), 'protobuf', 'value-convert')).toThrow(/wrong magic byte 1/);
    expect(() => readWireHeader(Buffer.from([0, 0, 1]), 'protobuf', 'key-convert')).toThrow(BadRecordError);
  });

  it.each([[[0]], [[1]], [[0, 2]], [[3, 0, 1]], [[200]]])('reads message indexes %j and leaves the payload', (indexes) => {
    const body = Buffer.concat([indexBytes(indexes), Buffer.from([0x0a, 0x01, 0x41])]);
    const r = readMessageIndexes(body, 'value-convert', 7);
    expect(r.indexes).toEqual(indexes);
    expect([...r.payload]).toEqual([0x0a, 0x01, 0x41]);
  });

  it('rejects negative counts and truncated index lists', () => {
    expect(() => readMessageIndexes(Buffer.from([1]), 'value-convert', 7)).toThrow(/message index count -1/);
    expect(() => readMessageIndexes(Buffer.from([4, 2]), 'value-convert', 7)).toThrow(/indexes unreadable \(schema 7\)/);
  });
});
