/**
 * Checks a JSON text (RFC 8259, UTF-8 bytes) without building it: one pass over the bytes, no allocation. The sink
 * uses it when a record's value goes to the store as its own bytes (a JSON value into a JSON store, read by nobody on
 * the way), where `JSON.parse` would build an object only to drop it.
 *
 * The scan is exact where it accepts: a text it accepts is one `JSON.parse(new TextDecoder('utf-8', { fatal: true })
 * .decode(bytes))` accepts, with the same top-level null-ness and no deeper nesting than `maxDepth`. Everything else
 * (invalid JSON or UTF-8, a byte-order mark, deeper nesting) is left to that full decode, which gives the error.
 */

/** The text is the JSON literal `null` (a tombstone), surrounded by whitespace at most. */
export const SCAN_NULL = 0;
/** The text is one JSON value other than `null`, nested no deeper than the limit. */
export const SCAN_VALUE = 1;
/** Not accepted: invalid, a byte-order mark, or nested deeper than the limit (the full decode decides). */
export const SCAN_REJECTED = 2;

/** What `scanJson` found. */
export type JsonScanResult = typeof SCAN_NULL | typeof SCAN_VALUE | typeof SCAN_REJECTED;

const OBJECT = 1;
const ARRAY = 2;
/** Deepest nesting the scan tracks; deeper texts are rejected whatever `maxDepth` says. */
const MAX_TRACKED_DEPTH = 255;
/** Container kind per depth (1-based). One per process: the scan is synchronous and never re-entered. */
const containers = new Uint8Array(MAX_TRACKED_DEPTH + 1);

/** Scans `b` as one JSON text nested at most `maxDepth` levels of objects/arrays (a scalar is 0, `{}` and `[]` are 1). */
export function scanJson(b: Uint8Array, maxDepth: number): JsonScanResult {
  const n = b.length;
  const limit = Math.min(maxDepth, MAX_TRACKED_DEPTH);
  let depth = 0;
  let topNull = false;
  let i = skipWhitespace(b, 0);
  for (;;) {
    // A value starts at i.
    if (i >= n) return SCAN_REJECTED;
    const c = b[i];
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return SCAN_REJECTED;
      containers[depth] = c === 0x7b ? OBJECT : ARRAY;
      i = skipWhitespace(b, i + 1);
      const close = c === 0x7b ? 0x7d : 0x5d;
      if (b[i] === close) {
        depth--;
        i++;
      } else {
        if (c === 0x7b && (i = memberName(b, i)) < 0) return SCAN_REJECTED;
        continue;
      }
    } else if (c === 0x22 /* " */) {
      if ((i = stringEnd(b, i)) < 0) return SCAN_REJECTED;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      if ((i = numberEnd(b, i)) < 0) return SCAN_REJECTED;
    } else if (c === 0x74 /* t */) {
      if (!literal(b, i, TRUE)) return SCAN_REJECTED;
      i += 4;
    } else if (c === 0x66 /* f */) {
      if (!literal(b, i, FALSE)) return SCAN_REJECTED;
      i += 5;
    } else if (c === 0x6e /* n */) {
      if (!literal(b, i, NULL)) return SCAN_REJECTED;
      i += 4;
      if (depth === 0) topNull = true;
    } else {
      return SCAN_REJECTED;
    }
    // After a value: a separator, the end of containers, or the end of the text.
    for (;;) {
      i = skipWhitespace(b, i);
      if (depth === 0) return i === n ? (topNull ? SCAN_NULL : SCAN_VALUE) : SCAN_REJECTED;
      const d = b[i];
      const kind = containers[depth];
      if (d === 0x2c /* , */) {
        i = skipWhitespace(b, i + 1);
        if (kind === OBJECT && (i = memberName(b, i)) < 0) return SCAN_REJECTED;
        break;
      }
      if ((d === 0x7d /* } */ && kind === OBJECT) || (d === 0x5d /* ] */ && kind === ARRAY)) {
        depth--;
        i++;
        continue;
      }
      return SCAN_REJECTED;
    }
    i = skipWhitespace(b, i);
  }
}

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function literal(b: Uint8Array, i: number, word: number[]): boolean {
  if (i + word.length > b.length) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return false;
  return true;
}

function skipWhitespace(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** An object member's name and colon at i (whitespace skipped after them): the index after, or -1. */
function memberName(b: Uint8Array, i: number): number {
  if (b[i] !== 0x22) return -1;
  i = stringEnd(b, i);
  if (i < 0) return -1;
  i = skipWhitespace(b, i);
  if (b[i] !== 0x3a /* : */) return -1;
  return skipWhitespace(b, i + 1);
}

/** The index after the string starting at i (a quote), or -1: escapes checked, control characters refused, UTF-8 well-formed. */
function stringEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  i++;
  while (i < n) {
    const c = b[i];
    if (c === 0x22) return i + 1;
    if (c === 0x5c /* \ */) {
      const e = b[i + 1];
      if (e === 0x75 /* u */) {
        if (i + 6 > n || !hex(b[i + 2]) || !hex(b[i + 3]) || !hex(b[i + 4]) || !hex(b[i + 5])) return -1;
        i += 6;
      } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        i += 2;
      } else {
        return -1;
      }
    } else if (c < 0x20) {
      return -1;
    } else if (c < 0x80) {
      i++;
    } else {
      i = utf8End(b, i);
      if (i < 0) return -1;
    }
  }
  return -1;
}

/** The index after the well-formed UTF-8 sequence of two to four bytes at i (Unicode table 3-7), or -1. */
function utf8End(b: Uint8Array, i: number): number {
  const c = b[i];
  let lo = 0x80;
  let hi = 0xbf;
  let more: number;
  if (c >= 0xc2 && c <= 0xdf) more = 1;
  else if (c >= 0xe0 && c <= 0xef) {
    more = 2;
    if (c === 0xe0) lo = 0xa0;
    else if (c === 0xed) hi = 0x9f; // no UTF-16 surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    more = 3;
    if (c === 0xf0) lo = 0x90;
    else if (c === 0xf4) hi = 0x8f; // nothing above U+10FFFF
  } else return -1;
  if (i + more >= b.length) return -1;
  const first = b[i + 1];
  if (first < lo || first > hi) return -1;
  for (let k = 2; k <= more; k++) {
    const x = b[i + k];
    if (x < 0x80 || x > 0xbf) return -1;
  }
  return i + more + 1;
}

function hex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function digit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The index after the number starting at i (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), or -1. */
function numberEnd(b: Uint8Array, i: number): number {
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) i++;
  else if (b[i] >= 0x31 && b[i] <= 0x39) while (digit(b[i])) i++;
  else return -1;
  if (b[i] === 0x2e /* . */) {
    i++;
    if (!digit(b[i])) return -1;
    while (digit(b[i])) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!digit(b[i])) return -1;
    while (digit(b[i])) i++;
  }
  return i;
}
