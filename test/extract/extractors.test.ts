import {
  BuiltinExtractor,
  createExtractor,
  DebeziumExtractor,
  isSkip,
  MAX_VALUE_DEPTH,
  parseFieldPath,
  SourceRecord,
  getPath,
  loadCustomExtractor,
  setPath,
  valueDepth,
} from '../../src/extract';
import { BadRecordError } from '../../src/errors';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const rec = (value: unknown, key: unknown = 'k1', extra: Partial<SourceRecord> = {}): SourceRecord => ({
  topic: 't',
  partition: 0,
  offset: '5',
  timestamp: 1000,
  key,
  value,
  headers: {},
  ...extra,
});
const spec = (s: object) => ({ preset: 'none' as const, ...s });

describe('field paths', () => {
  it('parses dots, indexes and quoted names', () => {
    expect(parseFieldPath('payload.after.id')).toEqual(['payload', 'after', 'id']);
    expect(parseFieldPath('items[0].sku')).toEqual(['items', 0, 'sku']);
    expect(parseFieldPath('a["x.y"]')).toEqual(['a', 'x.y']);
    expect(() => parseFieldPath('a..b')).toThrow(/malformed/);
    expect(() => parseFieldPath('a[')).toThrow(/malformed/);
    expect(getPath({ a: [{ b: 2 }] }, parseFieldPath('a[0].b'))).toBe(2);
    expect(getPath({ a: 1 }, parseFieldPath('a.b.c'))).toBeUndefined();
  });
});

describe('field paths and untrusted record content', () => {
  it('refuses __proto__, constructor and prototype segments, dotted or quoted', () => {
    for (const p of [
      '__proto__.x',
      'constructor.prototype.isAdmin',
      'a.prototype',
      'a["__proto__"]',
      'a["constructor"].b',
      'constructor',
    ]) {
      expect(() => parseFieldPath(p)).toThrow(/not allowed \(it would reach a prototype\)/);
    }
    expect(parseFieldPath('proto.constructors')).toEqual(['proto', 'constructors']);
  });
  it('walks own properties only: inherited members are missing', () => {
    expect(getPath({}, ['toString'])).toBeUndefined();
    expect(getPath({ a: {} }, ['a', 'hasOwnProperty'])).toBeUndefined();
    expect(getPath(JSON.parse('{"__proto__": {"x": 1}}'), ['__proto__', 'x'])).toBe(1); // an own key named __proto__ is data
  });
  it('a projection of record content never pollutes Object.prototype', () => {
    // The path itself is refused at config time; a projection fed hostile JSON stays confined to its own objects.
    expect(() => new BuiltinExtractor(spec({ value: { project: ['constructor.prototype.isAdmin'] } }))).toThrow(/not allowed/);
    const ex = new BuiltinExtractor(spec({ value: { project: ['a.b', 'c'] } }));
    const hostile = JSON.parse('{"a": {"b": {"__proto__": {"isAdmin": true}}}, "c": {"constructor": {"prototype": {"isAdmin": true}}}}');
    const r = ex.extract(rec(hostile)) as { value: Record<string, unknown> };
    expect(JSON.stringify(r.value)).toBe('{"a":{"b":{"__proto__":{"isAdmin":true}}},"c":{"constructor":{"prototype":{"isAdmin":true}}}}');
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('isAdmin');
  });
  it('setPath creates own data properties and refuses prototype segments', () => {
    const out: Record<string, unknown> = {};
    setPath(out, ['a', 0, 'b'], 1);
    expect(out).toEqual({ a: [{ b: 1 }] });
    expect(() => setPath(out, ['__proto__', 'isAdmin'], true)).toThrow(/not allowed/);
    expect(Object.prototype).not.toHaveProperty('isAdmin');
  });
});

describe('depth limit on extracted keys and values', () => {
  const nest = (depth: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { v };
    return v;
  };
  it('counts nesting iteratively, also for values far too deep for recursion', () => {
    expect(valueDepth(5)).toBe(0);
    expect(valueDepth({})).toBe(1);
    expect(valueDepth({ a: [{ b: 1 }], c: 2 })).toBe(3);
    expect(valueDepth(nest(200_000))).toBe(200_000);
    expect(valueDepth(nest(200_000), 64)).toBe(65); // stops early past the limit
  });
  it('rejects values deeper than MAX_VALUE_DEPTH as bad records at the extract stage; accepts the limit itself', async () => {
    const ex = await createExtractor(spec({}), process.cwd());
    expect(await ex.extract(rec(nest(MAX_VALUE_DEPTH)))).toMatchObject({ key: 'k1' });
    const deep = JSON.parse('['.repeat(5000) + ']'.repeat(5000));
    let err: unknown;
    try {
      await ex.extract(rec(deep));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadRecordError);
    expect(err).toMatchObject({
      stage: 'extract',
      code: 'VALUE_TOO_DEEP',
      message: expect.stringMatching(/value nests deeper than 64 levels/),
    });
    await expect(Promise.resolve().then(() => ex.extract(rec({ a: 1 }, nest(100))))).rejects.toMatchObject({
      code: 'VALUE_TOO_DEEP',
      message: expect.stringMatching(/^extracted key/),
    });
  });
});

describe('BuiltinExtractor', () => {
  it('defaults to whole key, whole value, record timestamp', () => {
    expect(new BuiltinExtractor(spec({})).extract(rec({ a: 1 }))).toEqual({ key: 'k1', value: { a: 1 }, timestamp: 1000 });
  });
  it('extracts nested key, projection and field timestamp (iso and seconds)', () => {
    const ex = new BuiltinExtractor(
      spec({
        key: { from: 'value', path: 'payload.after.id' },
        value: { from: 'value', path: 'payload.after', project: ['name', 'addr.city'] },
        timestamp: { from: 'field', path: 'payload.ts', format: 'iso' },
      }),
    );
    const r = ex.extract(
      rec({ payload: { ts: '1970-01-01T00:00:02Z', after: { id: 7, name: 'n', secret: 's', addr: { city: 'c', zip: 'z' } } } }),
    );
    expect(r).toEqual({ key: 7, value: { name: 'n', addr: { city: 'c' } }, timestamp: 2000 });
    const sec = new BuiltinExtractor(spec({ timestamp: { from: 'field', path: 'ts', format: 'seconds' } }));
    expect((sec.extract(rec({ ts: 3 })) as { timestamp: number }).timestamp).toBe(3000);
  });
  it('builds composite keys in field order', () => {
    const ex = new BuiltinExtractor(spec({ key: { from: 'value', fields: ['region', 'id'] } }));
    expect((ex.extract(rec({ region: 'eu', id: 4 })) as { key: unknown }).key).toEqual(['eu', 4]);
    expect(() => ex.extract(rec({ region: 'eu' }))).toThrow(/composite key field "id" is missing/);
  });
  it('takes timestamps from headers', () => {
    const ex = new BuiltinExtractor(spec({ timestamp: { from: 'header', header: 'event-time', format: 'millis' } }));
    expect((ex.extract(rec({}, 'k', { headers: { 'event-time': Buffer.from('4242') } })) as { timestamp: number }).timestamp).toBe(4242);
    expect(() => ex.extract(rec({}))).toThrow(BadRecordError);
  });
  it('a tombstone without the timestamp field or header gets the onMissing policy (default: the partition stream time)', () => {
    const field = (onMissing?: 'streamTime' | 'record' | 'fail') =>
      new BuiltinExtractor(spec({ timestamp: { from: 'field', path: 'ts', format: 'millis', onMissing } }));
    // streamTime: the writer's current stream time, so the tombstone never moves it; the record timestamp before any.
    expect(field().extract(rec(null, 'k1', { streamTime: 700 }))).toEqual({ key: 'k1', value: null, timestamp: 700 });
    expect(field('streamTime').extract(rec(null))).toEqual({ key: 'k1', value: null, timestamp: 1000 });
    expect(field('record').extract(rec(null, 'k1', { streamTime: 700 }))).toEqual({ key: 'k1', value: null, timestamp: 1000 });
    expect(() => field('fail').extract(rec(null, 'k1', { streamTime: 700 }))).toThrow(/onMissing is fail/);
    // A value record without the field is always a bad record, whatever the policy.
    expect(() => field('streamTime').extract(rec({ other: 1 }, 'k1', { streamTime: 700 }))).toThrow(/timestamp field "ts" is missing/);
    // A tombstone that carries the field or the header uses it.
    const header = new BuiltinExtractor(spec({ timestamp: { from: 'header', header: 'at', format: 'millis', onMissing: 'streamTime' } }));
    expect(header.extract(rec(null, 'k1', { headers: { at: '55' }, streamTime: 700 }))).toEqual({ key: 'k1', value: null, timestamp: 55 });
    expect(header.extract(rec(null, 'k1', { streamTime: 700 }))).toEqual({ key: 'k1', value: null, timestamp: 700 });
    expect(() => header.extract(rec({ v: 1 }, 'k1', { streamTime: 700 }))).toThrow(/header "at" is missing/);
  });
  it('filters, but never filters out tombstones', () => {
    const ex = new BuiltinExtractor(spec({ filter: [{ path: 'status', from: 'value', notEquals: 'draft' }] }));
    const r = ex.extract(rec({ status: 'draft' }));
    expect(isSkip(r) && r.reason).toMatch(/filter/);
    expect(isSkip(ex.extract(rec({ status: 'live' })))).toBe(false);
    expect(isSkip(ex.extract(rec(null)))).toBe(false);
  });
  it('rejects a null key and bad timestamps as bad records', () => {
    const ex = new BuiltinExtractor(spec({}));
    expect(() => ex.extract(rec({}, null))).toThrow(/record key is missing/);
    const f = new BuiltinExtractor(spec({ timestamp: { from: 'field', path: 'ts', format: 'millis' } }));
    expect(() => f.extract(rec({ ts: -5 }))).toThrow(/non-negative/);
    expect(() => f.extract(rec({ ts: 'soon' }))).toThrow(/not a valid ISO/);
  });
});

describe('DebeziumExtractor', () => {
  const ex = new DebeziumExtractor(spec({ preset: 'debezium' }));
  const env = (op: string, before: unknown, after: unknown) => ({
    schema: {},
    payload: { op, before, after, source: { ts_ms: 777 }, ts_ms: 999 },
  });
  it('maps c/r/u to after with source.ts_ms and unwraps single-column keys', () => {
    expect(ex.extract(rec(env('c', null, { id: 1, n: 'a' }), { schema: {}, payload: { id: 1 } }))).toEqual({
      key: 1,
      value: { id: 1, n: 'a' },
      timestamp: 777,
    });
    expect(ex.extract(rec(env('u', { id: 1 }, { id: 1, n: 'b' }), { id: 1 }))).toEqual({
      key: 1,
      value: { id: 1, n: 'b' },
      timestamp: 777,
    });
    expect(ex.extract(rec(env('r', null, { id: 1 }), { a: 1, b: 'x' }))).toMatchObject({ key: [1, 'x'] });
  });
  it('maps d to a tombstone and Kafka tombstones to tombstones', () => {
    expect(ex.extract(rec(env('d', { id: 1 }, null), { id: 1 }))).toEqual({ key: 1, value: null, timestamp: 777 });
    expect(ex.extract(rec(null, { id: 1 }))).toEqual({ key: 1, value: null, timestamp: 1000 });
    // A Kafka tombstone has no source.ts_ms: it takes the partition's stream time (onMissing default).
    expect(ex.extract(rec(null, { id: 1 }, { streamTime: 800 }))).toEqual({ key: 1, value: null, timestamp: 800 });
    const strict = new DebeziumExtractor(spec({ preset: 'debezium', timestamp: { from: 'record', format: 'millis', onMissing: 'fail' } }));
    expect(() => strict.extract(rec(null, { id: 1 }, { streamTime: 800 }))).toThrow(BadRecordError);
  });
  it('skips truncate events and rejects unknown ops', () => {
    expect(isSkip(ex.extract(rec(env('t', null, null), { id: 1 })))).toBe(true);
    expect(() => ex.extract(rec(env('x', null, null), { id: 1 }))).toThrow(/unknown Debezium op/);
  });
});

describe('custom extractor modules', () => {
  it('loads a JS module exporting createExtractor(options)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adj-ext-'));
    fs.writeFileSync(
      path.join(dir, 'ex.js'),
      'exports.createExtractor = (o) => ({ extract: (r) => ({ key: o.prefix + r.key, value: r.value, timestamp: 1 }) });',
    );
    const ex = await loadCustomExtractor('./ex.js', dir, { prefix: 'p-' });
    expect(await ex.extract(rec({ v: 1 }))).toEqual({ key: 'p-k1', value: { v: 1 }, timestamp: 1 });
  });
  it('fails clearly for a module without an extractor', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adj-ext-'));
    fs.writeFileSync(path.join(dir, 'bad.js'), 'exports.x = 1;');
    await expect(loadCustomExtractor('./bad.js', dir)).rejects.toThrow(/must export/);
    await expect(loadCustomExtractor('./missing.js', dir)).rejects.toThrow(/cannot load extractor module/);
  });
});
