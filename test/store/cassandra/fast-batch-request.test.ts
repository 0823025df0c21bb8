import * as fc from 'fast-check';
import { types } from 'cassandra-driver';
import { installLeanBatchRequest, leanBatchWrite } from '../../../src/store/cassandra/fast-batch-request';

/* eslint-disable @typescript-eslint/no-require-imports */
const requests = require('cassandra-driver/lib/requests');
const { FrameWriter } = require('cassandra-driver/lib/writers');
const Encoder = require('cassandra-driver/lib/encoder');
/* eslint-enable @typescript-eslint/no-require-imports */

type Write = (this: unknown, encoder: unknown, streamId: number) => Buffer;
// The driver's own body writer, captured before this file installs the patch.
const original = requests.BatchRequest.prototype.write as Write;
const lean = leanBatchWrite(FrameWriter) as unknown as Write;

/** Stub execution options: what a batch request reads of them. */
function execOptions(values: Record<string, unknown>): unknown {
  return new Proxy({}, { get: (_t, k: string) => () => (k in values ? values[k] : k.startsWith('is') ? false : undefined) });
}

const queryId = Buffer.from('0123456789abcdef');
const codes = [types.dataTypes.blob, types.dataTypes.bigint, types.dataTypes.bigint, types.dataTypes.text, types.dataTypes.int];
const meta = { columns: codes.map((code) => ({ type: { code } })) };

/** Bind values for the columns above, including numbers a bigint takes in place and ones it does not. */
const row = fc.tuple(
  fc.option(fc.uint8Array({ maxLength: 60 }).map((a) => Buffer.from(a))),
  fc.oneof(fc.maxSafeInteger(), fc.constant(Number.NEGATIVE_INFINITY), fc.constant(2 ** 60)),
  fc.oneof(
    fc.maxSafeNat().map((n) => -n),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => types.Long.fromString(n.toString())),
  ),
  fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null), fc.constant(types.unset), fc.constant(undefined)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
);

/** The frames (and recorded body lengths) of the same batch written by the driver and by the lean body. */
function both(
  rows: unknown[][],
  version: number,
  values: Record<string, unknown>,
  encoding: object = {},
): [Buffer, Buffer, number, number] {
  const encoder = new Encoder(version, { encoding });
  const make = () =>
    new requests.BatchRequest(
      rows.map((params) => ({ query: 'INSERT', queryId, meta, params })),
      execOptions(values),
    );
  const a = make();
  const b = make();
  return [original.call(a, encoder, 9), lean.call(b, encoder, 9), a.length, b.length];
}

describe('lean cassandra-driver batch body', () => {
  it('writes the same frame as the driver for any prepared rows, options and protocol version', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 1, maxLength: 30 }),
        fc.constantFrom(3, 4, 5, 0x42),
        fc.record({
          getConsistency: fc.constantFrom(1, 4, 6),
          getSerialConsistency: fc.constantFrom(undefined, 8, 9),
          getOrGenerateTimestamp: fc.option(fc.maxSafeNat().map((n) => types.Long.fromNumber(n))),
          getKeyspace: fc.constantFrom(undefined, 'ks'),
          isQueryTracing: fc.boolean(),
        }),
        (rows, version, values) => {
          // Protocol v3 has no unset value (both writers refuse it alike).
          const bound = version < 4 ? rows.map((r) => r.map((v) => (v === types.unset ? null : v))) : rows;
          const [a, b, la, lb] = both(bound, version, values);
          expect(lb).toBe(la);
          expect(b.equals(a)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes a safe-integer bigint as the driver writes its Long, and leaves numbers to a BigInt encoder', () => {
    const [a, b] = both([[null, 2 ** 53 - 1, -(2 ** 40), 'w', 0]], 4, { getConsistency: 6 });
    expect(b.equals(a)).toBe(true);
    const withLong = both([[null, types.Long.fromNumber(2 ** 53 - 1), types.Long.fromNumber(-(2 ** 40)), 'w', 0]], 4, {
      getConsistency: 6,
    })[0];
    expect(b.equals(withLong)).toBe(true);
    // An encoder that wants BigInts refuses numbers: both ways alike.
    expect(() => both([[null, 5, 6, 'w', 0]], 4, { getConsistency: 6 }, { useBigIntAsLong: true })).toThrow(/BigInt/);
    expect(() =>
      lean.call(
        new requests.BatchRequest([{ query: 'INSERT', queryId, meta, params: [null, 5, 6, 'w', 0] }], execOptions({})),
        new Encoder(4, { encoding: { useBigIntAsLong: true } }),
        1,
      ),
    ).toThrow(/BigInt/);
  });

  it('writes unprepared statements with hints as the driver does', () => {
    const encoder = new Encoder(4, {});
    const queries = [
      { query: 'UPDATE t SET a = ? WHERE k = ?', params: [7, 'x'] },
      { query: 'DELETE FROM t', params: null },
    ];
    const make = () => new requests.BatchRequest(queries, execOptions({ getConsistency: 4, getHints: [['bigint', 'text']] }));
    expect(lean.call(make(), encoder, 1).equals(original.call(make(), encoder, 1))).toBe(true);
  });

  it('installs once, after its self-check, on the driver prototype', () => {
    expect(installLeanBatchRequest()).toBe(true);
    expect(requests.BatchRequest.prototype.write).not.toBe(original);
    expect(installLeanBatchRequest()).toBe(true);
  });
});
