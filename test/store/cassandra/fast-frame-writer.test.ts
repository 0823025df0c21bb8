import * as fc from 'fast-check';
import { types } from 'cassandra-driver';
import { installLeanFrameWriter, leanFrameWriterMethods } from '../../../src/store/cassandra/fast-frame-writer';

/* eslint-disable @typescript-eslint/no-require-imports */
type Writer = {
  bodyLength: number;
  writeByte(n: number): void;
  writeShort(n: number): void;
  writeInt(n: number): void;
  writeLong(n: types.Long): void;
  writeBytes(b: Buffer | null): void;
  writeShortBytes(b: Buffer | null): void;
  writeString(s: string): void;
  writeLString(s: string): void;
  write(version: number, streamId: number, flags?: number): Buffer;
};
const { FrameWriter } = require('cassandra-driver/lib/writers') as { FrameWriter: { new (op: number): Writer; prototype: Writer } };
const { FrameHeader } = require('cassandra-driver/lib/types');
const requests = require('cassandra-driver/lib/requests');
const Encoder = require('cassandra-driver/lib/encoder');
/* eslint-enable @typescript-eslint/no-require-imports */

// The driver's own methods, captured before this file installs the patch.
const originals = {
  ...Object.fromEntries(Object.getOwnPropertyNames(FrameWriter.prototype).map((k) => [k, (FrameWriter.prototype as never)[k]])),
};
const lean = leanFrameWriterMethods(FrameHeader);
class Lean extends FrameWriter {}
Object.assign(Lean.prototype, lean);

type Op = (w: Writer) => void;
const big = fc.integer({ min: 1500, max: 9000 }).map((n) => Buffer.alloc(n, n & 0xff));
const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map((n) => (w: Writer) => w.writeByte(n)),
  fc.integer({ min: 0, max: 0xffff }).map((n) => (w: Writer) => w.writeShort(n)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((n) => (w: Writer) => w.writeInt(n)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => (w: Writer) => w.writeLong(types.Long.fromString(n.toString()))),
  fc.option(bytes).map((b) => (w: Writer) => w.writeBytes(b)),
  fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))).map((b) => (w: Writer) => b !== null && w.writeShortBytes(b)),
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => (w: Writer) => w.writeString(s)),
  fc.string({ maxLength: 400 }).map((s) => (w: Writer) => w.writeLString(s)),
);

/** The frame both writers make of the same calls. */
function frames(ops: Op[], version: number, flags: number): [Buffer, Buffer, number, number] {
  const a = new FrameWriter(0x0d);
  const b = new Lean(0x0d);
  for (const o of ops) {
    o(a);
    o(b);
  }
  return [a.write(version, 7, flags), b.write(version, 7, flags), a.bodyLength, b.bodyLength];
}

/** Stub execution options: what a batch or execute request reads of them. */
function execOptions(over: Record<string, unknown> = {}): unknown {
  const values: Record<string, unknown> = {
    getConsistency: types.consistencies.localQuorum,
    getOrGenerateTimestamp: types.Long.fromNumber(1_796_103_975_183_000),
    getHints: undefined,
    getFetchSize: 0,
    ...over,
  };
  return new Proxy({}, { get: (_t, k: string) => () => values[k] ?? (k.startsWith('is') ? false : undefined) });
}

/** A request's frame with the driver's methods, then with the lean ones (swapped in on the prototype). */
function bothWays(make: () => { write(encoder: unknown, streamId: number): Buffer }): [Buffer, Buffer] {
  const encoder = new Encoder(4, {});
  const current = { ...Object.fromEntries(Object.keys(lean).map((k) => [k, (FrameWriter.prototype as never)[k]])) };
  Object.assign(FrameWriter.prototype, originals);
  const a = make().write(encoder, 5);
  Object.assign(FrameWriter.prototype, lean);
  const b = make().write(encoder, 5);
  Object.assign(FrameWriter.prototype, current);
  return [a, b];
}

describe('lean cassandra-driver FrameWriter', () => {
  it('writes the same frame as the driver for any sequence of calls and protocol version', () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 40 }),
        big,
        fc.array(op, { maxLength: 40 }),
        fc.constantFrom(2, 3, 4, 5),
        fc.integer({ min: 0, max: 15 }),
        (pre, grow, post, version, flags) => {
          // The large value in between makes the lean buffer grow (past its first 2 KiB, and ×4 again) mid-frame.
          const [a, b, la, lb] = frames([...pre, (w) => w.writeBytes(grow), ...post], version, flags);
          expect(lb).toBe(la);
          expect(b.equals(a)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('throws where the driver throws (a short out of range)', () => {
    expect(() => new FrameWriter(1).writeShort(-1)).toThrow(/out of range/);
    expect(() => new Lean(1).writeShort(-1)).toThrow(/out of range/);
  });

  it("writes the driver's own batch and execute requests byte for byte", () => {
    const queryId = Buffer.from('0123456789abcdef');
    const meta = {
      columns: [
        { type: { code: types.dataTypes.blob } },
        { type: { code: types.dataTypes.bigint } },
        { type: { code: types.dataTypes.text } },
      ],
    };
    const rows = Array.from({ length: 40 }, (_, i) => ({
      query: 'INSERT',
      queryId,
      meta,
      params: [Buffer.alloc(200 + i, i), types.Long.fromNumber(i * 1000), i % 3 === 0 ? null : `writer-${i}`],
    }));
    const [a, b] = bothWays(() => new requests.BatchRequest(rows, execOptions()));
    expect(a.length).toBeGreaterThan(2048 * 4);
    expect(b.equals(a)).toBe(true);
    const [c, d] = bothWays(() => new requests.ExecuteRequest('SELECT', queryId, rows[0].params, execOptions({ getFetchSize: 100 }), meta));
    expect(d.equals(c)).toBe(true);
  });

  it('installs once, after its self-check, on the driver prototype', () => {
    expect(installLeanFrameWriter()).toBe(true);
    expect(FrameWriter.prototype.writeInt).not.toBe(originals.writeInt);
    const w = new FrameWriter(0x0d);
    w.writeInt(7);
    expect((w as unknown as { buffers: Buffer[] }).buffers).toEqual([]);
    expect(w.write(4, 1).subarray(9)).toEqual(Buffer.from([0, 0, 0, 7]));
    expect(installLeanFrameWriter()).toBe(true);
  });
});
