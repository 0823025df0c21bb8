import { JsonConverter, StringConverter } from '../../src/converters';
import { BuiltinExtractor, createExtractor, Extracted, isSkip } from '../../src/extract';
import { BadRecordError } from '../../src/errors';
import { RecordProcessor } from '../../src/sink/record-processor';
import { SinkRecord } from '../../src/sink/sink-record';

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
});
