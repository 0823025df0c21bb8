import { Serde } from '../types';
import { serdeError } from './serde-error';

const SIGN_BIT = 1n << 63n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** Encodes a signed 64-bit integer big-endian with the sign bit flipped, so byte order equals numeric order. */
export function encodeOrderedInt64(value: bigint): Buffer {
  if (value < INT64_MIN || value > INT64_MAX) throw serdeError('int64', `${value} is outside the int64 range`);
  const buf = Buffer.allocUnsafe(8);
  buf.writeBigUInt64BE(BigInt.asUintN(64, value) ^ SIGN_BIT);
  return buf;
}

/** Decodes 8 bytes written by encodeOrderedInt64. */
export function decodeOrderedInt64(bytes: Buffer, offset = 0): bigint {
  if (bytes.length < offset + 8) throw serdeError('int64', `need 8 bytes, got ${bytes.length - offset}`);
  return BigInt.asIntN(64, bytes.readBigUInt64BE(offset) ^ SIGN_BIT);
}

/** Order-preserving key serde for signed 64-bit integers as bigint (8 bytes). */
export const int64KeySerde: Serde<bigint> = {
  name: 'int64',
  serialize(value: bigint): Buffer {
    if (typeof value !== 'bigint') throw serdeError('int64', `expected a bigint, got ${typeof value}`);
    return encodeOrderedInt64(value);
  },
  deserialize(bytes: Buffer): bigint {
    return decodeOrderedInt64(bytes);
  },
};

/** Order-preserving key serde for safe-integer numbers; same 8-byte encoding as int64KeySerde. */
export const intKeySerde: Serde<number> = {
  name: 'int',
  serialize(value: number): Buffer {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      throw serdeError('int', `expected a safe integer, got ${String(value)}`);
    }
    return encodeOrderedInt64(BigInt(value));
  },
  deserialize(bytes: Buffer): number {
    const v = decodeOrderedInt64(bytes);
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw serdeError('int', `${v} is not a safe integer`);
    }
    return Number(v);
  },
};
