import fc from 'fast-check';
import { InvalidArgumentError } from '../../src/errors';
import {
  bufferSerde,
  decodeTuple,
  encodeTuple,
  int64KeySerde,
  intKeySerde,
  jsonSerde,
  serdeByName,
  stringSerde,
  tupleKeySerde,
  TupleElement,
} from '../../src/store/serde';
import { prefixUpperBound } from '../../src/store/key-range';

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** Natural order of tuples: element-wise, bytes < string < int, strings by code point, shorter prefix first. */
function compareTuples(a: TupleElement[], b: TupleElement[]): number {
  const rank = (e: TupleElement): number => (Buffer.isBuffer(e) ? 0 : typeof e === 'string' ? 1 : 2);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    const r = rank(x) - rank(y);
    if (r !== 0) return r;
    let c: number;
    if (Buffer.isBuffer(x)) c = Buffer.compare(x, y as Buffer);
    else if (typeof x === 'string') c = Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y as string, 'utf8'));
    else c = BigInt(x) < BigInt(y as number) ? -1 : BigInt(x) > BigInt(y as number) ? 1 : 0;
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

const strings = fc.string({ unit: fc.constantFrom('a', 'b', '\u0000', '\u00ff', 'é', '😀', 'z', '\u0001'), maxLength: 6 });
const element: fc.Arbitrary<TupleElement> = fc.oneof(
  strings,
  fc.integer({ min: -5, max: 5 }),
  fc.maxSafeInteger(),
  fc.uint8Array({ maxLength: 4 }).map((u) => Buffer.from(u)),
);
const tuple = fc.array(element, { maxLength: 4 });

describe('order-preserving key serdes', () => {
  it('int64: byte order equals numeric order, round trip', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
        fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
        (a, b) => {
          const ea = int64KeySerde.serialize(a);
          const eb = int64KeySerde.serialize(b);
          expect(int64KeySerde.deserialize(ea)).toBe(a);
          expect(sign(Buffer.compare(ea, eb))).toBe(a < b ? -1 : a > b ? 1 : 0);
        },
      ),
    );
  });

  it('int: byte order equals numeric order, round trip', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.maxSafeInteger(), (a, b) => {
        const ea = intKeySerde.serialize(a);
        expect(intKeySerde.deserialize(ea)).toBe(a);
        expect(sign(Buffer.compare(ea, intKeySerde.serialize(b)))).toBe(sign(a - b));
      }),
    );
    expect(() => intKeySerde.serialize(1.5)).toThrow(InvalidArgumentError);
    expect(() => int64KeySerde.serialize(1n << 63n)).toThrow(InvalidArgumentError);
  });

  it('string: UTF-8 byte order equals code-point order', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const cp = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0) ?? 0);
        const [x, y] = [cp(a), cp(b)];
        let expected = 0;
        for (let i = 0; i < Math.min(x.length, y.length) && expected === 0; i++) expected = sign(x[i] - y[i]);
        if (expected === 0) expected = sign(x.length - y.length);
        expect(sign(Buffer.compare(stringSerde.serialize(a), stringSerde.serialize(b)))).toBe(expected);
        expect(stringSerde.deserialize(stringSerde.serialize(a))).toBe(a);
      }),
    );
  });

  it('tuple: byte order equals natural order, round trip', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        const ea = encodeTuple(a);
        const eb = encodeTuple(b);
        expect(decodeTuple(ea)).toEqual(a);
        expect(sign(Buffer.compare(ea, eb))).toBe(sign(compareTuples(a, b)));
      }),
      { numRuns: 500 },
    );
  });

  it('tuple: an encoded prefix tuple is a byte prefix of the longer tuple', () => {
    fc.assert(
      fc.property(tuple, tuple, (a, b) => {
        expect(
          encodeTuple([...a, ...b])
            .subarray(0, encodeTuple(a).length)
            .equals(encodeTuple(a)),
        ).toBe(true);
      }),
    );
  });

  it('tuple rejects unsupported elements and bad bytes', () => {
    expect(() => tupleKeySerde.serialize([null as unknown as string])).toThrow(InvalidArgumentError);
    expect(() => tupleKeySerde.serialize([1.25])).toThrow(InvalidArgumentError);
    expect(() => tupleKeySerde.deserialize(Buffer.from([0x02, 0x61]))).toThrow(InvalidArgumentError);
    expect(() => tupleKeySerde.deserialize(Buffer.from([0x77]))).toThrow(InvalidArgumentError);
    expect(tupleKeySerde.deserialize(tupleKeySerde.serialize([1n << 60n]))).toEqual([1n << 60n]);
  });

  it('prefixUpperBound is the smallest key above every extension', () => {
    expect(prefixUpperBound(Buffer.from([0x01, 0xff]))).toEqual(Buffer.from([0x02]));
    expect(prefixUpperBound(Buffer.from([0xff, 0xff]))).toBeUndefined();
    expect(prefixUpperBound(Buffer.from('ab'))).toEqual(Buffer.from('ac'));
  });
});

describe('value serdes and registry', () => {
  it('json round-trips and rejects unserialisable values', () => {
    const s = jsonSerde<unknown>();
    expect(s.deserialize(s.serialize({ a: [1, 'x', null] }))).toEqual({ a: [1, 'x', null] });
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    expect(() => s.serialize(cyc)).toThrow(InvalidArgumentError);
    expect(() => s.serialize(10n)).toThrow(InvalidArgumentError);
    expect(() => s.serialize(undefined)).toThrow(InvalidArgumentError);
    expect(() => s.deserialize(Buffer.from('{'))).toThrow(InvalidArgumentError);
  });

  it('string and buffer serdes type-check their input', () => {
    expect(() => stringSerde.serialize(5 as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => bufferSerde.serialize('x' as unknown as Buffer)).toThrow(InvalidArgumentError);
    expect(bufferSerde.deserialize(Buffer.from([1, 2]))).toEqual(Buffer.from([1, 2]));
  });

  it('serdeByName resolves every built-in name', () => {
    for (const n of ['string', 'buffer', 'json', 'int64', 'int', 'tuple']) expect(serdeByName(n).name).toBe(n);
    expect(() => serdeByName('avro')).toThrow(InvalidArgumentError);
  });
});
