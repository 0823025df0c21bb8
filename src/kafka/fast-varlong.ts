/**
 * A faster kafkajs `Decoder.readVarLong` (kafkajs 2.2.4 is pinned and no longer maintained). kafkajs decodes every
 * record's timestamp delta as a zig-zag varlong through its BigInt-backed `Long`, with about six `Long`/BigInt
 * allocations per byte: ≈ 14% of the worker's allocations per record (bench heap profile). The replacement decodes
 * values of up to 7 bytes (|value| < 2^48: any timestamp delta inside a batch) with plain numbers and makes one `Long`;
 * longer or truncated input goes to kafkajs's own method. It is installed only if it agrees with the original on a
 * self-check, so a kafkajs change can never make it decode differently.
 */

/** kafkajs's Long (a BigInt wrapper): only what the patch uses. */
interface KafkaLong {
  readonly value: bigint;
}
interface KafkaLongClass {
  fromNumber(n: number): KafkaLong;
}
/** kafkajs's protocol Decoder: only what the patch uses. */
interface KafkaDecoder {
  buffer: Buffer;
  offset: number;
  readVarLong(): KafkaLong;
}
interface KafkaDecoderClass {
  new (buffer: Buffer): KafkaDecoder;
  prototype: KafkaDecoder;
}

/** Most bytes decoded with numbers: 7 × 7 = 49 bits, inside a double's 53. */
const FAST_BYTES = 7;

/**
 * The zig-zag varlong at the decoder's position as a number, advancing the position; undefined (position unchanged)
 * when it is longer than 7 bytes or truncated.
 */
export function readSmallVarLong(d: { buffer: Buffer; offset: number }): number | undefined {
  const buf = d.buffer;
  const start = d.offset;
  let unsigned = 0;
  let scale = 1;
  for (let i = 0; i < FAST_BYTES; i++) {
    const b = buf[start + i];
    if (b === undefined) return undefined;
    unsigned += (b & 0x7f) * scale;
    if (b < 0x80) {
      d.offset = start + i + 1;
      // Zig-zag: even → n / 2, odd → −(n + 1) / 2.
      return unsigned % 2 === 0 ? unsigned / 2 : -(unsigned + 1) / 2;
    }
    scale *= 128;
  }
  return undefined;
}

/** The replacement for `original`, built on kafkajs's Long. */
export function fastReadVarLong(
  Long: KafkaLongClass,
  original: () => KafkaLong,
): ((this: KafkaDecoder) => KafkaLong) & { original: () => KafkaLong } {
  const readVarLong = function readVarLong(this: KafkaDecoder): KafkaLong {
    const n = readSmallVarLong(this);
    return n === undefined ? original.call(this) : Long.fromNumber(n);
  };
  return Object.assign(readVarLong, { original });
}

/** Zig-zag varlong encodings the self-check decodes with both methods (edges of every byte length, signs, int64 limits). */
function samples(): Buffer[] {
  const values: bigint[] = [0n, 1n, -1n, 63n, -64n, 64n, -65n, 2n ** 48n - 1n, -(2n ** 48n), 2n ** 48n, -(2n ** 48n) - 1n];
  for (let bits = 6n; bits <= 62n; bits += 7n) values.push(2n ** bits, -(2n ** bits), 2n ** bits - 1n, 1_700_000_000_000n);
  values.push(2n ** 63n - 1n, -(2n ** 63n));
  return values.map(encodeVarLong);
}

/** Kafka's zig-zag varlong encoding of a signed 64-bit value. */
export function encodeVarLong(v: bigint): Buffer {
  let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n));
  const out: number[] = [];
  while (z >= 0x80n) {
    out.push(Number(z & 0x7fn) | 0x80);
    z >>= 7n;
  }
  out.push(Number(z));
  return Buffer.from(out);
}

/** Whether `patched` decodes every sample (and a truncated one) exactly as `original`, leaving the same offset. */
function agrees(Decoder: KafkaDecoderClass, original: () => KafkaLong, patched: () => KafkaLong): boolean {
  const inputs = samples();
  inputs.push(Buffer.from([0x80, 0x80]), Buffer.concat([encodeVarLong(-5n), encodeVarLong(300n)]));
  for (const b of inputs) {
    const a = new Decoder(b);
    const p = new Decoder(b);
    const x = original.call(a);
    const y = patched.call(p);
    if (x.value !== y.value || a.offset !== p.offset) return false;
  }
  return true;
}

let installed: boolean | undefined;

/** Installs the faster readVarLong on kafkajs's Decoder once; returns whether it is in use. */
export function installFastVarLong(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const Decoder = require('kafkajs/src/protocol/decoder') as KafkaDecoderClass;
    const Long = require('kafkajs/src/utils/long') as KafkaLongClass;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const original = Decoder.prototype.readVarLong;
    const patched = fastReadVarLong(Long, original);
    if (typeof original !== 'function' || !agrees(Decoder, original, patched)) return false;
    Decoder.prototype.readVarLong = patched;
    installed = true;
  } catch {
    // A kafkajs without these modules keeps its own decoder.
  }
  return installed;
}
