import fc from 'fast-check';
import { scanJson, SCAN_NULL, SCAN_REJECTED, SCAN_VALUE } from '../../src/converters/json-scan';
import { valueDepth } from '../../src/extract/depth-limit';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** What the full decode (the JSON converter's) makes of the bytes: the value, or `failed`. */
function fullDecode(b: Uint8Array): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(decoder.decode(b)) };
  } catch {
    return { ok: false };
  }
}

/** The scan's contract: what it accepts, the full decode accepts, with the same null-ness and depth within the limit. */
function agrees(b: Uint8Array, maxDepth: number): boolean {
  const scan = scanJson(b, maxDepth);
  if (scan === SCAN_REJECTED) return true;
  const full = fullDecode(b);
  if (!full.ok) return false;
  if (b[0] === 0xef) return false; // a byte-order mark is left to the full decode
  return (scan === SCAN_NULL) === (full.value === null) && valueDepth(full.value) <= maxDepth;
}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const whitespace = fc.constantFrom('', ' ', '\n', '\t', '\r\n  ');

/** A JSON text of a value, with whitespace around it. */
const jsonText = fc
  .tuple(whitespace, fc.jsonValue({ maxDepth: 6 }), whitespace, fc.boolean())
  .map(([a, v, z, pretty]) => a + JSON.stringify(v, null, pretty ? 2 : undefined) + z);

/** A valid text with one byte changed, inserted or removed: mostly invalid texts close to valid ones. */
const mutated = fc
  .tuple(jsonText, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('set', 'insert', 'delete'))
  .map(([text, at, byte, how]) => {
    const b = Array.from(utf8(text));
    const i = b.length === 0 ? 0 : at % b.length;
    if (how === 'set' && b.length > 0) b[i] = byte;
    else if (how === 'insert') b.splice(i, 0, byte);
    else b.splice(i, 1);
    return new Uint8Array(b);
  });

/** Byte soup from JSON's own alphabet and some invalid UTF-8 lead and continuation bytes. */
const tokens = fc
  .array(
    fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      'u',
      '0',
      '1',
      '-',
      '.',
      'e',
      'E',
      '+',
      'true',
      'false',
      'null',
      'nul',
      ' ',
      '\n',
      '"a"',
      '\\u00e9',
      '\\uD800',
      '\\x',
      '\u00e9',
      '\u20ac',
      '\u{1F600}',
      '\u2028',
      '\x01',
      '\xff',
    ),
    { maxLength: 24 },
  )
  .chain((parts) =>
    fc.array(fc.constantFrom(0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff), { maxLength: 2 }).map((raw) => {
      const b = Array.from(utf8(parts.join('')));
      for (const r of raw) b.splice(b.length > 0 ? r % b.length : 0, 0, r);
      return new Uint8Array(b);
    }),
  );

describe('scanJson: exact where it accepts (checked against JSON.parse of the fatal UTF-8 decode)', () => {
  it('accepts every JSON text of a value within the depth limit, with the same null-ness', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const b = utf8(text);
        const value = JSON.parse(text) as unknown;
        expect(scanJson(b, 64)).toBe(value === null ? SCAN_NULL : SCAN_VALUE);
      }),
      { numRuns: 2000 },
    );
  });

  it('never accepts what the full decode refuses (valid texts with one byte changed, token soup, invalid UTF-8)', () => {
    fc.assert(
      fc.property(mutated, (b) => agrees(b, 64)),
      { numRuns: 20000 },
    );
    fc.assert(
      fc.property(tokens, (b) => agrees(b, 64)),
      { numRuns: 20000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 24 }), (b) => agrees(b, 64)),
      { numRuns: 5000 },
    );
  });

  it('rejects nesting deeper than the limit, and accepts it at the limit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 70 }), fc.integer({ min: 0, max: 70 }), (depth, limit) => {
        const text = '['.repeat(depth) + '1' + ']'.repeat(depth);
        expect(scanJson(utf8(text), limit)).toBe(depth <= limit ? SCAN_VALUE : SCAN_REJECTED);
      }),
    );
  });

  it('checks strings as the decoder does: escapes, control characters, well-formed UTF-8 only', () => {
    const cases: [string | number[], number][] = [
      ['"a\\u00E9\\n\\/"', SCAN_VALUE],
      ['"\\uD800"', SCAN_VALUE], // a lone surrogate escape is valid JSON
      ['"\\u00g0"', SCAN_REJECTED],
      ['"\\a"', SCAN_REJECTED],
      ['"tab\there"', SCAN_REJECTED],
      [[0x22, 0xed, 0xa0, 0x80, 0x22], SCAN_REJECTED], // an encoded surrogate
      [[0x22, 0xc0, 0xaf, 0x22], SCAN_REJECTED], // overlong
      [[0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], SCAN_REJECTED], // above U+10FFFF
      [[0x22, 0xe2, 0x82, 0x22], SCAN_REJECTED], // truncated
      [[0xef, 0xbb, 0xbf, 0x31], SCAN_REJECTED], // byte-order mark: left to the full decode
      ['"\u{1F600}\u20ac"', SCAN_VALUE],
      [' null ', SCAN_NULL],
      ['[null]', SCAN_VALUE],
      ['{"a":null}', SCAN_VALUE],
      ['01', SCAN_REJECTED],
      ['-', SCAN_REJECTED],
      ['1.', SCAN_REJECTED],
      ['1e+', SCAN_REJECTED],
      ['-0.5E-3', SCAN_VALUE],
      ['{"a":1,}', SCAN_REJECTED],
      ['[1,]', SCAN_REJECTED],
      ['{"a" 1}', SCAN_REJECTED],
      ['{1:2}', SCAN_REJECTED],
      ['[1] [2]', SCAN_REJECTED],
      ['', SCAN_REJECTED],
      ['  ', SCAN_REJECTED],
      ['{"a":[{"b":{}}],"c":"d"}', SCAN_VALUE],
    ];
    for (const [input, expected] of cases) {
      const b = typeof input === 'string' ? utf8(input) : new Uint8Array(input);
      expect([input, scanJson(b, 64)]).toEqual([input, expected]);
      expect(agrees(b, 64)).toBe(true);
    }
  });
});
