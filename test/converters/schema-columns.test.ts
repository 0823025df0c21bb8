import { schemaFields } from '../../src/converters/schema-columns';

describe('typed columns derived from registry schemas', () => {
  it('maps Avro scalar fields, nullable unions, enums and logical types; nested types stay unmapped', () => {
    const avro = {
      type: 'record',
      name: 'Rate',
      fields: [
        { name: 'currency', type: 'string' },
        { name: 'rate', type: { type: 'bytes', logicalType: 'decimal', precision: 12, scale: 6 } },
        { name: 'ts', type: { type: 'long', logicalType: 'timestamp-millis' } },
        { name: 'source', type: ['null', 'string'], default: null },
        { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['SPOT', 'FWD'] } },
        { name: 'kind2', type: ['null', 'Kind'] },
        { name: 'tags', type: { type: 'array', items: 'string' } },
        { name: 'either', type: ['int', 'string'] },
        { name: 'validUntil', type: 'long' },
      ],
    };
    expect(schemaFields('AVRO', JSON.stringify(avro))).toEqual({
      columns: [
        { field: 'currency', column: 'currency', type: 'text' },
        { field: 'rate', column: 'rate', type: 'decimal', scale: 6 },
        { field: 'ts', column: 'ts', type: 'timestamp' },
        { field: 'source', column: 'source', type: 'text' },
        { field: 'kind', column: 'kind', type: 'text' },
        { field: 'kind2', column: 'kind2', type: 'text' },
        { field: 'validUntil', column: 'valid_until', type: 'bigint' },
      ],
      unmapped: ['tags', 'either'],
    });
    expect(schemaFields('AVRO', JSON.stringify(avro), ['rate', 'tags']).columns.map((c) => c.field)).toEqual(['rate']);
  });

  it('maps JSON Schema properties (formats, nullable types)', () => {
    const js = {
      type: 'object',
      properties: {
        rate: { type: 'number' },
        n: { type: ['integer', 'null'] },
        at: { type: 'string', format: 'date-time' },
        obj: { type: 'object' },
      },
    };
    expect(schemaFields('JSON', JSON.stringify(js))).toEqual({
      columns: [
        { field: 'rate', column: 'rate', type: 'double' },
        { field: 'n', column: 'n', type: 'bigint' },
        { field: 'at', column: 'at', type: 'timestamp' },
      ],
      unmapped: ['obj'],
    });
  });

  it('maps the Protobuf message whose fields the record has, with the field names the converter decodes to', () => {
    const proto =
      'syntax = "proto3"; package fx; message Meta { string note = 1; } enum Kind { SPOT = 0; } message Rate { string currency = 1; double rate = 2; int64 ts_ms = 3; Kind kind = 4; repeated string tags = 5; Inner inner = 6; } message Inner { int32 a = 1; }';
    // Without a record nothing is mapped yet: the first record's fields select the message type.
    expect(schemaFields('PROTOBUF', proto)).toEqual({ columns: [], unmapped: [] });
    expect(schemaFields('PROTOBUF', proto, undefined, ['note']).columns).toEqual([{ field: 'note', column: 'note', type: 'text' }]);
    expect(() => schemaFields('PROTOBUF', proto, undefined, ['nope'])).toThrow(
      /no message type of the Protobuf schema has the fields \[nope\]/,
    );
    expect(schemaFields('PROTOBUF', proto, undefined, ['currency', 'rate', 'tsMs', 'kind', 'tags', 'inner'])).toEqual({
      columns: [
        { field: 'currency', column: 'currency', type: 'text' },
        { field: 'rate', column: 'rate', type: 'double' },
        { field: 'tsMs', column: 'ts_ms', type: 'bigint' },
        { field: 'kind', column: 'kind', type: 'text' },
      ],
      unmapped: ['tags', 'inner'],
    });
  });
});
