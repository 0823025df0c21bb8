import * as fc from 'fast-check';
import { encodeVarLong, fastReadVarLong, installFastVarLong } from '../../src/kafka/fast-varlong';

/* eslint-disable @typescript-eslint/no-require-imports */
const Decoder = require('kafkajs/src/protocol/decoder') as {
  new (b: Buffer): { offset: number; readVarLong(): { value: bigint } };
  prototype: { readVarLong(): { value: bigint } };
};
const Encoder = require('kafkajs/src/protocol/encoder') as new () => { writeVarLong(v: unknown): unknown; buffer: Buffer };
const Long = require('kafkajs/src/utils/long') as { fromNumber(n: number): { value: bigint }; fromValue(v: unknown): unknown };
/* eslint-enable @typescript-eslint/no-require-imports */

// kafkajs's own method, captured before any patch (installFastVarLong may already have run in this process).
const original = (() => {
  const patched = Decoder.prototype.readVarLong;
  return (patched as { original?: () => { value: bigint } }).original ?? patched;
})();
const fast = fastReadVarLong(Long, original);

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const small = fc.bigInt({ min: -(2n ** 50n), max: 2n ** 50n });

/** Decodes `count` varlongs from buf with fn: the values and the final offset. */
function decodeAll(buf: Buffer, count: number, fn: () => { value: bigint }): { values: bigint[]; offset: number } {
  const d = new Decoder(buf);
  const values: bigint[] = [];
  for (let i = 0; i < count; i++) values.push(fn.call(d).value);
  return { values, offset: d.offset };
}

describe('fast kafkajs readVarLong', () => {
  it('encodes exactly like kafkajs (Kafka zig-zag varlong)', () => {
    fc.assert(
      fc.property(fc.oneof(int64, small), (v) => {
        const e = new Encoder();
        e.writeVarLong(Long.fromValue(v.toString()));
        expect(encodeVarLong(v).equals(e.buffer)).toBe(true);
      }),
    );
  });

  it('decodes every int64, alone and in sequences, to the same value and offset as kafkajs', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(int64, small, fc.bigInt({ min: -300n, max: 300n })), { minLength: 1, maxLength: 20 }), (vs) => {
        const buf = Buffer.concat(vs.map(encodeVarLong));
        const want = decodeAll(buf, vs.length, original);
        expect(want.values).toEqual(vs);
        expect(decodeAll(buf, vs.length, fast)).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });

  it('hands truncated input to kafkajs, so it reads as kafkajs reads it', () => {
    for (const bytes of [[0x80], [0xff, 0xff], [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80]]) {
      const buf = Buffer.from(bytes);
      expect(decodeAll(buf, 1, fast)).toEqual(decodeAll(buf, 1, original));
    }
  });

  it('installs once, after its self-check, in place of kafkajs readVarLong', () => {
    expect(installFastVarLong()).toBe(true);
    expect(installFastVarLong()).toBe(true);
    expect(Decoder.prototype.readVarLong).not.toBe(original);
    const buf = Buffer.concat([encodeVarLong(-7n), encodeVarLong(1_700_000_000_123n), encodeVarLong(2n ** 62n)]);
    expect(decodeAll(buf, 3, Decoder.prototype.readVarLong).values).toEqual([-7n, 1_700_000_000_123n, 2n ** 62n]);
  });
});
