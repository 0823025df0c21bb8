/**
 * A leaner Murmur3 token for cassandra-driver 4.8.0 (pinned). The token-aware policy hashes every request's routing key
 * (each batch of the write path, each read), and the driver's `Murmur3Tokenizer.hash` does its 64-bit arithmetic on
 * `MutableLong`s: a new object for every byte of a short key's tail and every multiply's temporary, ≈ 2 KB per hash of
 * a 7-byte key (≈ 120 B per record of the bench's batches). The replacement computes the same hash (Cassandra's
 * variant of MurmurHash3 x64_128, first half, with its sign-extended tail bytes) on 32-bit halves held in locals, and
 * allocates only the token it returns. It is installed only if it gives the driver's own tokens on a self-check.
 */

/** The driver's MutableLong: built from four 16-bit limbs, low first. */
type MutableLongClass = new (b00: number, b16: number, b32: number, b48: number) => unknown;

/** The driver's Murmur3Token class. */
type TokenClass = new (value: unknown) => { getValue(): unknown };

/** The driver's Murmur3Tokenizer class: its hash is what is replaced. */
interface TokenizerClass {
  prototype: { hash(value: Buffer): unknown };
}

// The result of the last 64-bit operation, as high and low unsigned 32-bit halves.
let RH = 0;
let RL = 0;

/** (aH:aL) × (bH:bL) mod 2^64 into RH:RL, on 16-bit limbs (every partial product stays exact in a double). */
function mul(aH: number, aL: number, bH: number, bL: number): void {
  const a48 = aH >>> 16;
  const a32 = aH & 0xffff;
  const a16 = aL >>> 16;
  const a00 = aL & 0xffff;
  const b48 = bH >>> 16;
  const b32 = bH & 0xffff;
  const b16 = bL >>> 16;
  const b00 = bL & 0xffff;
  // Each sum below stays under 2^32, so >>> and & read it exactly; c48's under 2^35, whose low 16 bits & still reads.
  let c00 = a00 * b00;
  let c16 = c00 >>> 16;
  c00 &= 0xffff;
  c16 += a16 * b00;
  let c32 = c16 >>> 16;
  c16 &= 0xffff;
  c16 += a00 * b16;
  c32 += c16 >>> 16;
  c16 &= 0xffff;
  c32 += a32 * b00;
  let c48 = c32 >>> 16;
  c32 &= 0xffff;
  c32 += a16 * b16;
  c48 += c32 >>> 16;
  c32 &= 0xffff;
  c32 += a00 * b32;
  c48 += c32 >>> 16;
  c32 &= 0xffff;
  c48 += a48 * b00 + a32 * b16 + a16 * b32 + a00 * b48;
  c48 &= 0xffff;
  RH = ((c48 << 16) | c32) >>> 0;
  RL = ((c16 << 16) | c00) >>> 0;
}

/** (aH:aL) + (bH:bL) mod 2^64 into RH:RL. */
function add(aH: number, aL: number, bH: number, bL: number): void {
  const lo = aL + bL;
  RL = lo >>> 0;
  RH = (aH + bH + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** (h:l) rotated left by n (0 < n < 64, n ≠ 32) into RH:RL. */
function rotl(h: number, l: number, n: number): void {
  if (n > 32) {
    const t = h;
    h = l;
    l = t;
    n -= 32;
  }
  RH = ((h << n) | (l >>> (32 - n))) >>> 0;
  RL = ((l << n) | (h >>> (32 - n))) >>> 0;
}

/** k1 of a block or the tail mixed (k *= c1, rotl 31, k *= c2) into RH:RL. */
function mixK1(h: number, l: number): void {
  mul(h, l, 0x87c37b91, 0x114253d5);
  rotl(RH, RL, 31);
  mul(RH, RL, 0x4cf5ad43, 0x2745937f);
}

/** k2 of a block or the tail mixed (k *= c2, rotl 33, k *= c1) into RH:RL. */
function mixK2(h: number, l: number): void {
  mul(h, l, 0x4cf5ad43, 0x2745937f);
  rotl(RH, RL, 33);
  mul(RH, RL, 0x87c37b91, 0x114253d5);
}

/** Cassandra's fmix64 of (h:l) into RH:RL. */
function fmix(h: number, l: number): void {
  // k ^= k >>> 33, k *= 0xff51afd7ed558ccd, k ^= k >>> 33, k *= 0xc4ceb9fe1a85ec53, k ^= k >>> 33
  l = (l ^ (h >>> 1)) >>> 0;
  mul(h, l, 0xff51afd7, 0xed558ccd);
  h = RH;
  l = (RL ^ (RH >>> 1)) >>> 0;
  mul(h, l, 0xc4ceb9fe, 0x1a85ec53);
  RL = (RL ^ (RH >>> 1)) >>> 0;
}

/**
 * Up to 8 tail bytes data[at .. at + count) as one little-endian 64-bit word into RH:RL, each byte sign-extended before
 * it is shifted into place (Java's `(long) b << s`, as Cassandra computes it).
 */
function tailWord(data: Uint8Array, at: number, count: number): void {
  let kH = 0;
  let kL = 0;
  for (let i = count - 1; i >= 0; i--) {
    const s = i * 8;
    const v = (data[at + i] << 24) >> 24;
    if (s < 32) {
      kL = (kL ^ (v << s)) >>> 0;
      kH = (kH ^ (s === 0 ? v >> 31 : v >> (32 - s))) >>> 0;
    } else {
      kH = (kH ^ (v << (s - 32))) >>> 0;
    }
  }
  RH = kH;
  RL = kL;
}

/** The key's little-endian 32-bit word at offset i (bytes as unsigned). */
function word(data: Uint8Array, i: number): number {
  return (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)) >>> 0;
}

/**
 * The first 64 bits of Cassandra's MurmurHash3 x64_128 (seed 0) of `data`, as Murmur3Partitioner computes a token:
 * `[high, low]` unsigned 32-bit halves. Its tail bytes are sign-extended before they are shifted into place.
 */
export function murmur3Halves(data: Uint8Array): [number, number] {
  murmur3(data);
  return [RH, RL];
}

/** murmur3Halves into RH:RL, with no allocation. */
function murmur3(data: Uint8Array): void {
  const length = data.length;
  const nblocks = length >> 4;
  let h1H = 0;
  let h1L = 0;
  let h2H = 0;
  let h2L = 0;
  for (let b = 0; b < nblocks; b++) {
    const o = b * 16;
    mixK1(word(data, o + 4), word(data, o));
    h1H = (h1H ^ RH) >>> 0;
    h1L = (h1L ^ RL) >>> 0;
    rotl(h1H, h1L, 27);
    add(RH, RL, h2H, h2L);
    mul(RH, RL, 0, 5);
    add(RH, RL, 0, 0x52dce729);
    h1H = RH;
    h1L = RL;
    mixK2(word(data, o + 12), word(data, o + 8));
    h2H = (h2H ^ RH) >>> 0;
    h2L = (h2L ^ RL) >>> 0;
    rotl(h2H, h2L, 31);
    add(RH, RL, h1H, h1L);
    mul(RH, RL, 0, 5);
    add(RH, RL, 0, 0x38495ab5);
    h2H = RH;
    h2L = RL;
  }
  const tail = nblocks * 16;
  const rest = length & 15;
  if (rest > 8) {
    tailWord(data, tail + 8, rest - 8);
    mixK2(RH, RL);
    h2H = (h2H ^ RH) >>> 0;
    h2L = (h2L ^ RL) >>> 0;
  }
  if (rest > 0) {
    tailWord(data, tail, Math.min(rest, 8));
    mixK1(RH, RL);
    h1H = (h1H ^ RH) >>> 0;
    h1L = (h1L ^ RL) >>> 0;
  }
  h1L = (h1L ^ length) >>> 0;
  h2L = (h2L ^ length) >>> 0;
  add(h1H, h1L, h2H, h2L);
  h1H = RH;
  h1L = RL;
  add(h2H, h2L, h1H, h1L);
  fmix(RH, RL);
  h2H = RH;
  h2L = RL;
  fmix(h1H, h1L);
  add(RH, RL, h2H, h2L);
}

/** A `hash` for the driver's tokenizer that returns its Murmur3Token over a MutableLong of murmur3Halves. */
export function leanMurmur3Hash(MutableLong: MutableLongClass, Token: TokenClass): (value: Buffer) => unknown {
  return function hash(value: Buffer): unknown {
    murmur3(value);
    return new Token(new MutableLong(RL & 0xffff, RL >>> 16, RH & 0xffff, RH >>> 16));
  };
}

/** Keys of every length up to 40 bytes, with bytes below and above 0x80, and a few longer ones. */
function selfCheckKeys(): Buffer[] {
  const keys: Buffer[] = [];
  let x = 0x9e3779b9;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  for (let n = 0; n <= 40; n++) {
    for (let r = 0; r < 4; r++) {
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = r === 0 ? 0xff : r === 1 ? i : next() & 0xff;
      keys.push(b);
    }
  }
  keys.push(Buffer.from('k000042'), Buffer.alloc(200, 0x80), Buffer.from(Array.from({ length: 257 }, (_, i) => i & 0xff)));
  return keys;
}

/** Whether both hashes give equal tokens for every self-check key. */
function agrees(original: (v: Buffer) => unknown, lean: (v: Buffer) => unknown): boolean {
  for (const key of selfCheckKeys()) {
    const a = original(key) as { compare(o: unknown): number; toString(): string };
    const b = lean(key);
    if (a.compare(b) !== 0 || a.toString() !== String(b)) return false;
  }
  return true;
}

let installed: boolean | undefined;

/** Installs the lean Murmur3 hash on cassandra-driver's Murmur3Tokenizer once; returns whether it is in use. */
export function installLeanMurmur3(): boolean {
  installed ??= (() => {
    try {
      /* eslint-disable @typescript-eslint/no-require-imports */
      const { Murmur3Tokenizer } = require('cassandra-driver/lib/tokenizer') as { Murmur3Tokenizer: TokenizerClass };
      const MutableLong = require('cassandra-driver/lib/types/mutable-long') as MutableLongClass;
      const { Murmur3Token } = require('cassandra-driver/lib/token') as { Murmur3Token: TokenClass };
      /* eslint-enable @typescript-eslint/no-require-imports */
      const original = Murmur3Tokenizer.prototype.hash;
      if (typeof original !== 'function') return false;
      const lean = leanMurmur3Hash(MutableLong, Murmur3Token);
      const tokenizer = Object.create(Murmur3Tokenizer.prototype) as { hash(v: Buffer): unknown };
      if (!agrees((v) => original.call(tokenizer, v), lean)) return false;
      Murmur3Tokenizer.prototype.hash = lean;
      return true;
    } catch {
      // A driver without these modules keeps its own hash.
      return false;
    }
  })();
  return installed;
}
