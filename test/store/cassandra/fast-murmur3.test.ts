import * as fc from 'fast-check';
import { installLeanMurmur3, leanMurmur3Hash, murmur3Halves } from '../../../src/store/cassandra/fast-murmur3';

/* eslint-disable @typescript-eslint/no-require-imports */
const { Murmur3Tokenizer } = require('cassandra-driver/lib/tokenizer');
const MutableLong = require('cassandra-driver/lib/types/mutable-long');
const { Murmur3Token } = require('cassandra-driver/lib/token');
/* eslint-enable @typescript-eslint/no-require-imports */

type Hash = (this: unknown, value: Buffer) => { toString(): string; compare(o: unknown): number };
// The driver's own hash, captured before this file installs the patch.
const tokenizer = new Murmur3Tokenizer();
const original = Murmur3Tokenizer.prototype.hash as Hash;
const driverHash = (b: Buffer) => original.call(tokenizer, b);
const lean = leanMurmur3Hash(MutableLong, Murmur3Token) as (b: Buffer) => { toString(): string };

/** The signed 64-bit token of [high, low] halves, in decimal. */
function signed([h, l]: [number, number]): string {
  return BigInt.asIntN(64, (BigInt(h) << 32n) | BigInt(l)).toString();
}

describe('lean Murmur3 token (cassandra-driver Murmur3Tokenizer.hash replacement)', () => {
  it('gives the driver tokens for keys of every length, with bytes on both sides of 0x80', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70 }), (a) => {
        const key = Buffer.from(a);
        const expected = driverHash(key);
        expect(lean(key).toString()).toBe(expected.toString());
        expect(expected.compare(lean(key))).toBe(0);
        expect(signed(murmur3Halves(key))).toBe(expected.toString());
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees on the edge cases: the empty key, a single byte above 0x7f, a bench key', () => {
    // Cassandra's own token(key) is compared in test/integration/store/murmur3-token.test.ts.
    expect(signed(murmur3Halves(Buffer.alloc(0)))).toBe(driverHash(Buffer.alloc(0)).toString());
    expect(signed(murmur3Halves(Buffer.from([0xff])))).toBe(driverHash(Buffer.from([0xff])).toString());
    expect(signed(murmur3Halves(Buffer.from('k000042')))).toBe(driverHash(Buffer.from('k000042')).toString());
  });

  it('installs once, after its self-check, and the driver then hashes through it', () => {
    expect(installLeanMurmur3()).toBe(true);
    expect(installLeanMurmur3()).toBe(true);
    expect(Murmur3Tokenizer.prototype.hash).not.toBe(original);
    const key = Buffer.from('some partition key, longer than one block');
    expect(new Murmur3Tokenizer().hash(key).toString()).toBe(driverHash(key).toString());
  });
});
