import { Serde } from '../types';
import { decodeOrderedInt64, encodeOrderedInt64 } from './int-key-serdes';
import { serdeError } from './serde-error';

/** One element of a composite key: a string, an integer (safe number or int64 bigint) or raw bytes. */
export type TupleElement = string | number | bigint | Buffer;

/** Type tags; their order defines the order between element types (bytes < string < int). All must be < 0xFF. */
const TAG_BYTES = 0x01;
const TAG_STRING = 0x02;
const TAG_INT = 0x15;

function escapeInto(out: Buffer[], bytes: Buffer): void {
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x00) {
      out.push(bytes.subarray(start, i + 1), Buffer.from([0xff]));
      start = i + 1;
    }
  }
  out.push(bytes.subarray(start), Buffer.from([0x00]));
}

function unescapeFrom(bytes: Buffer, offset: number): { value: Buffer; next: number } {
  const parts: number[] = [];
  let i = offset;
  for (;;) {
    if (i >= bytes.length) throw serdeError('tuple', 'unterminated string/bytes element');
    const b = bytes[i];
    if (b === 0x00) {
      if (bytes[i + 1] === 0xff) {
        parts.push(0x00);
        i += 2;
        continue;
      }
      return { value: Buffer.from(parts), next: i + 1 };
    }
    parts.push(b);
    i++;
  }
}

/** Encodes a tuple so that byte order equals element-wise natural order (shorter prefix first). */
export function encodeTuple(elements: readonly TupleElement[]): Buffer {
  if (!Array.isArray(elements)) throw serdeError('tuple', 'expected an array of elements');
  const out: Buffer[] = [];
  for (const el of elements) {
    if (typeof el === 'string') {
      out.push(Buffer.from([TAG_STRING]));
      escapeInto(out, Buffer.from(el, 'utf8'));
    } else if (Buffer.isBuffer(el)) {
      out.push(Buffer.from([TAG_BYTES]));
      escapeInto(out, el);
    } else if (typeof el === 'number') {
      if (!Number.isSafeInteger(el)) throw serdeError('tuple', `number element ${el} is not a safe integer`);
      out.push(Buffer.from([TAG_INT]), encodeOrderedInt64(BigInt(el)));
    } else if (typeof el === 'bigint') {
      out.push(Buffer.from([TAG_INT]), encodeOrderedInt64(el));
    } else {
      throw serdeError('tuple', `unsupported element type ${el === null ? 'null' : typeof el}`);
    }
  }
  return Buffer.concat(out);
}

/** Decodes a tuple; integers come back as numbers when safe, bigint otherwise. */
export function decodeTuple(bytes: Buffer): TupleElement[] {
  const result: TupleElement[] = [];
  let i = 0;
  while (i < bytes.length) {
    const tag = bytes[i++];
    if (tag === TAG_STRING || tag === TAG_BYTES) {
      const { value, next } = unescapeFrom(bytes, i);
      result.push(tag === TAG_STRING ? value.toString('utf8') : value);
      i = next;
    } else if (tag === TAG_INT) {
      const v = decodeOrderedInt64(bytes, i);
      const safe = v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER);
      result.push(safe ? Number(v) : v);
      i += 8;
    } else {
      throw serdeError('tuple', `unknown type tag 0x${tag.toString(16)} at byte ${i - 1}`);
    }
  }
  return result;
}

/** Order-preserving composite-key serde (FoundationDB-tuple-like). */
export const tupleKeySerde: Serde<TupleElement[]> = {
  name: 'tuple',
  serialize: (value) => encodeTuple(value),
  deserialize: (bytes) => decodeTuple(bytes),
};
