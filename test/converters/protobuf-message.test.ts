import { parse } from 'protobufjs';
import { addWellKnownTypes, decodeToPlain, messageTypeAt } from '../../src/converters/protobuf-message';

describe('Protobuf message indexes against a .proto file', () => {
  const proto = `syntax = "proto3";
package t.v1;
message A { string a = 1; message A1 { int32 x = 1; } enum E { Z = 0; } message A2 { int32 y = 1; message Deep { string d = 1; } } }
enum Top { T0 = 0; T1 = 1; }
message B { int64 n = 1; Top top = 2; bytes raw = 3; repeated string tags = 4; }
`;
  const root = parse(proto).root;
  const first = root.lookupType('t.v1.A');

  it.each([
    [[0], 't.v1.A'],
    [[1], 't.v1.B'],
    [[0, 0], 't.v1.A.A1'],
    [[0, 1], 't.v1.A.A2'],
    [[0, 1, 0], 't.v1.A.A2.Deep'],
  ])('%j names %s (enums are not counted)', (indexes, name) => {
    expect(messageTypeAt(first, indexes)?.fullName).toBe(`.${name}`);
  });

  it('returns null for a path that names no message', () => {
    expect(messageTypeAt(first, [2])).toBeNull();
    expect(messageTypeAt(first, [1, 0])).toBeNull();
  });

  it('decodes to a plain object with the proto3 JSON mapping and every field present', () => {
    const B = root.lookupType('t.v1.B');
    const payload = Buffer.from(B.encode(B.create({ n: '9007199254740993', top: 1, raw: Buffer.from('hi') })).finish());
    const v = decodeToPlain(B, payload);
    expect(v).toEqual({ n: '9007199254740993', top: 'T1', raw: 'aGk=', tags: [] });
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  });

  it('resolves well-known types imported without references (google/protobuf/timestamp.proto)', () => {
    const wk = parse(
      'syntax = "proto3";\nimport "google/protobuf/timestamp.proto";\nmessage Ev { string a = 1; google.protobuf.Timestamp at = 2; }\n',
    ).root;
    const ev = wk.lookupType('Ev');
    const payload = Buffer.from([0x0a, 0x01, 0x41, 0x12, 0x02, 0x08, 0x05]); // a="A", at={seconds: 5}
    expect(() => decodeToPlain(ev, payload)).toThrow(/no such Type or Enum 'google.protobuf.Timestamp'/);
    addWellKnownTypes(wk);
    addWellKnownTypes(wk); // idempotent
    expect(decodeToPlain(ev, payload)).toEqual({ a: 'A', at: { seconds: '5', nanos: 0 } });
    expect(messageTypeAt(ev, [0])?.fullName).toBe('.Ev'); // the added google namespace is not a message of the file
  });
});
