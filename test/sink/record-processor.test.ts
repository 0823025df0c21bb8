import { Converter, JsonConverter, StringConverter, UNPARSED_VALUE } from '../../src/converters';
import { BuiltinExtractor, createExtractor, Extracted, Extractor, isSkip } from '../../src/extract';
import { BadRecordError } from '../../src/errors';
import { RecordProcessor } from '../../src/sink/record-processor';
import { SinkRecord } from '../../src/sink/sink-record';
import { stringSerde } from '../../src/store/serde';
import fc from 'fast-check';

const record = (value: Buffer | null): SinkRecord => ({
  topic: 't',
  partition: 0,
  offset: '7',
  timestamp: '1000',
  key: Buffer.from('k1'),
  value,
});
const json = (text: string) => Buffer.from(text, 'utf8');

describe('RecordProcessor', () => {
  const processor = (extract: object = {}) =>
    new RecordProcessor(
      new StringConverter('key-convert'),
      new JsonConverter('value-convert'),
      new BuiltinExtractor({ preset: 'none', ...extract }),
    );

  it('answers without a promise when converters and extractor are synchronous', () => {
    const out = processor().process(record(json('{"a":1}')), Number.NEGATIVE_INFINITY);
    expect(out).not.toBeInstanceOf(Promise);
    expect(out).toMatchObject({ key: 'k1', value: { a: 1 }, timestamp: 1000 });
  });

  it('hands the record bytes on with a whole value, so the store need not serialise it again', async () => {
    const bytes = json('{ "a" : 1.50, "b": [true] }');
    const out = processor().process(record(bytes), 0) as Extracted;
    expect(out.valueBytes).toBe(bytes);
    // Through the loader's depth-limited wrapper too.
    const wrapped = new RecordProcessor(
      new StringConverter('key-convert'),
      new JsonConverter('value-convert'),
      await createExtractor({ preset: 'none' }, '.'),
    );
    expect((wrapped.process(record(bytes), 0) as Extracted).valueBytes).toBe(bytes);
  });

  it('does not hand the bytes on when the value is a part of the record value, a tombstone, or starts with a BOM', () => {
    expect((processor({ value: { path: 'a' } }).process(record(json('{"a":{"x":1}}')), 0) as Extracted).valueBytes).toBeUndefined();
    expect((processor({ value: { project: ['a'] } }).process(record(json('{"a":1,"b":2}')), 0) as Extracted).valueBytes).toBeUndefined();
    expect((processor().process(record(null), 0) as Extracted).valueBytes).toBeUndefined();
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json('{"a":1}')]);
    const out = processor().process(record(bom), 0) as Extracted;
    expect(out.value).toEqual({ a: 1 });
    expect(out.valueBytes).toBeUndefined();
  });

  it('still rejects invalid JSON as a bad record of the value-convert stage', () => {
    expect(() => processor().process(record(json('{"a":')), 0)).toThrow(BadRecordError);
    try {
      processor().process(record(json('{"a":')), 0);
    } catch (e) {
      expect((e as BadRecordError).stage).toBe('value-convert');
    }
  });

  it('skips stay skips', () => {
    const out = processor({ filter: [{ path: 'a', equals: 2 }] }).process(record(json('{"a":1}')), 0);
    expect(isSkip(out as Extracted)).toBe(true);
  });

  describe('values the store keeps as their bytes are checked, not built', () => {
    const keeping = async (extract: object = {}) =>
      new RecordProcessor(
        new StringConverter('key-convert'),
        new JsonConverter('value-convert'),
        await createExtractor({ preset: 'none', ...extract }, '.'),
        { storeKeepsValueBytes: true },
      );

    it('a valid value is UNPARSED_VALUE with its bytes handed on; a JSON null is a tombstone', async () => {
      const p = await keeping();
      const bytes = json('{ "a" : 1.50, "b": [true] }');
      const out = p.process(record(bytes), 0) as Extracted;
      expect(out).toMatchObject({ key: 'k1', timestamp: 1000 });
      expect(out.value).toBe(UNPARSED_VALUE);
      expect(out.valueBytes).toBe(bytes);
      const nul = p.process(record(json(' null ')), 0) as Extracted;
      expect(nul.value).toBeNull(); // the store writes a tombstone whatever bytes come with it
      expect((p.process(record(null), 0) as Extracted).value).toBeNull();
    });

    it('invalid JSON is the same bad record as without the check; a value too deep is VALUE_TOO_DEEP of the extract stage', async () => {
      const p = await keeping();
      for (const text of ['{"a":', '{"a":1}x', '"\\q"']) {
        let fromCheck: unknown;
        let fromParse: unknown;
        try {
          p.process(record(json(text)), 0);
        } catch (e) {
          fromCheck = e;
        }
        try {
          processor().process(record(json(text)), 0);
        } catch (e) {
          fromParse = e;
        }
        expect(fromCheck).toBeInstanceOf(BadRecordError);
        expect((fromCheck as BadRecordError).message).toBe((fromParse as BadRecordError).message);
        expect((fromCheck as BadRecordError).stage).toBe('value-convert');
      }
      const deep = json('['.repeat(65) + ']'.repeat(65));
      expect(() => p.process(record(deep), 0)).toThrow(expect.objectContaining({ code: 'VALUE_TOO_DEEP', stage: 'extract' }));
      const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json('{"a":1}')]);
      expect((p.process(record(bom), 0) as Extracted).value).toEqual({ a: 1 }); // built, and serialised by the store
    });

    it('builds the value whenever something reads it: a value path, a key or timestamp from the value, a value filter, or a store that serialises', async () => {
      const bytes = json('{"a":{"x":1},"id":"k9","ts":5,"keep":true}');
      const built = [
        await keeping({ value: { path: 'a' } }),
        await keeping({ key: { from: 'value', path: 'id' } }),
        await keeping({ timestamp: { from: 'field', path: 'ts' } }),
        await keeping({ filter: [{ path: 'keep', from: 'value', equals: true }] }),
        processor(),
      ];
      for (const p of built) expect((p.process(record(bytes), 0) as Extracted).value).not.toBe(UNPARSED_VALUE);
      // A filter on the key reads no value.
      const keyFilter = await keeping({ filter: [{ path: 'x', from: 'key', exists: false }] });
      expect((keyFilter.process(record(bytes), 0) as Extracted).value).toBe(UNPARSED_VALUE);
    });
  });
  describe("string keys the store writes as the record's bytes", () => {
    /** The record with `key` (value `{"id":"k1","a":1}`) through a processor whose store keeps key bytes unless `keeps` is false. */
    const processKey = (key: Buffer | null, o: { extractor?: Extractor; keyConverter?: Converter; keeps?: boolean } = {}): Extracted =>
      new RecordProcessor(
        o.keyConverter ?? new StringConverter('key-convert'),
        new JsonConverter('value-convert'),
        o.extractor ?? new BuiltinExtractor({ preset: 'none' }),
        { storeKeepsKeyBytes: o.keeps ?? true },
      ).process({ ...record(json('{"id":"k1","a":1}')), key }, 0) as Extracted;
    const keyed = (key: Buffer | null, extract: object = {}, keeps = true) =>
      processKey(key, { extractor: new BuiltinExtractor({ preset: 'none', ...extract }), keeps });

    it('hands the key bytes on when the key is the decoded record key', () => {
      const bytes = Buffer.from('clé-1', 'utf8');
      const out = keyed(bytes);
      expect(out.key).toBe('clé-1');
      expect(out.keyBytes).toBe(bytes);
    });

    it('not when the store encodes keys otherwise, the key is another string, or the bytes start with a BOM', () => {
      expect(keyed(Buffer.from('k1'), {}, false).keyBytes).toBeUndefined();
      const fromValue = keyed(Buffer.from('k2'), { key: { from: 'value', path: 'id' } });
      expect(fromValue.key).toBe('k1');
      expect(fromValue.keyBytes).toBeUndefined();
      // A key from the value equal to the record key is the same string: the record key's bytes are its encoding.
      expect(keyed(Buffer.from('k1'), { key: { from: 'value', path: 'id' } }).keyBytes?.toString()).toBe('k1');
      const bom = keyed(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('k1')]));
      expect(bom.key).toBe('k1');
      expect(bom.keyBytes).toBeUndefined();
    });

    it("leaves a custom extractor's frozen result as it is", () => {
      const frozen = processKey(Buffer.from('k1'), {
        extractor: { extract: (r) => Object.freeze({ key: r.key, value: r.value, timestamp: r.timestamp }) },
      });
      expect(frozen.key).toBe('k1');
      expect(frozen.keyBytes).toBeUndefined();
    });

    it('not with a key converter other than string', () => {
      const out = processKey(json('"k1"'), { keyConverter: new JsonConverter('key-convert') });
      expect(out.key).toBe('k1');
      expect(out.keyBytes).toBeUndefined();
    });

    it('the bytes handed on are exactly what the string serde would write, for any bytes the converter decodes', () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.uint8Array({ maxLength: 40 }),
            fc.string({ unit: 'binary', maxLength: 20 }).map((t) => Buffer.from(t, 'utf8')),
          ),
          (raw) => {
            const bytes = Buffer.from(raw);
            let out: Extracted;
            try {
              out = processKey(bytes);
            } catch (e) {
              expect(e).toBeInstanceOf(BadRecordError); // not UTF-8: a bad record, nothing written
              return;
            }
            if (out.keyBytes !== undefined) expect(stringSerde.serialize(out.key as string).equals(out.keyBytes)).toBe(true);
            else expect(bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) || bytes.length === 0).toBe(true);
          },
        ),
        { numRuns: 2000 },
      );
    });
  });
});
