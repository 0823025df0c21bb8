import { invalidLookupArgument } from './lookup-error';

/** Re-exported: the same key coercion the worker applies when writing. */
export { coerceKey } from '../store/serde/coerce';

/**
 * Parses a key given as text (URL path segment, CLI argument) per the store's key serde: string as is, int64/int as
 * integer text, json as JSON text, tuple as a JSON array text, buffer as base64. Throws INVALID_ARGUMENT on bad text.
 */
export function parseKeyText(serde: string, text: string): unknown {
  switch (serde) {
    case 'string':
      return text;
    case 'int64':
      if (!/^-?\d{1,19}$/.test(text)) throw invalidLookupArgument(`key ${JSON.stringify(text)} is not an int64 integer`, { serde });
      return BigInt(text);
    case 'int': {
      const n = Number(text);
      if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n))
        throw invalidLookupArgument(`key ${JSON.stringify(text)} is not a safe integer`, { serde });
      return n;
    }
    case 'json':
      return parseJson(text, serde);
    case 'tuple': {
      const v = parseJson(text, serde);
      if (!Array.isArray(v) || v.some((e) => typeof e !== 'string' && !(typeof e === 'number' && Number.isSafeInteger(e)))) {
        throw invalidLookupArgument(`key ${JSON.stringify(text)} must be a JSON array of strings and safe integers`, { serde });
      }
      return v;
    }
    case 'buffer':
      if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) throw invalidLookupArgument(`key ${JSON.stringify(text)} is not base64`, { serde });
      return Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    default:
      throw invalidLookupArgument(`keys of serde ${JSON.stringify(serde)} cannot be given as text`, { serde });
  }
}

function parseJson(text: string, serde: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalidLookupArgument(`key ${JSON.stringify(text)} is not valid JSON: ${(e as Error).message}`, { serde });
  }
}

/** Makes a decoded key or value JSON-safe: Buffers become base64 strings, bigints decimal strings (recursively). */
export function toJsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return v ?? null;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'bigint') return v.toString();
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'object' && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    // Defined, not assigned: a record's own "__proto__" field is data, never the reply object's prototype.
    for (const [k, x] of Object.entries(v as Record<string, unknown>))
      Object.defineProperty(out, k, { value: toJsonValue(x), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
}

/** Opaque cursor of a scan: base64url of the last encoded key. */
export function encodeCursor(lastKey: Buffer): string {
  return lastKey.toString('base64url');
}

/** Decodes a cursor made by encodeCursor (INVALID_ARGUMENT if malformed). */
export function decodeCursor(cursor: string): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidLookupArgument(`malformed cursor ${JSON.stringify(cursor)}`);
  return Buffer.from(cursor, 'base64url');
}
