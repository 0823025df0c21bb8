import { coerceKey, decodeCursor, encodeCursor, parseKeyText, ReadCache, toJsonValue } from '../../src/lookup';
import { Client } from 'cassandra-driver';
import { ManualClock } from '../../src/clock';
import { StoreEntry } from '../../src/generations';
import { ReadyTimeoutError } from '../../src/lookup';
import { LookupContext } from '../../src/lookup/lookup-context';
import { ReadinessChecker } from '../../src/lookup/readiness';
import { TtlMemo } from '../../src/lookup/ttl-memo';
import { WriterStreamTimes } from '../../src/lookup/writer-stream-times';
import { serdeByName } from '../../src/store/serde';

describe('WriterStreamTimes', () => {
  it("gives each version its writer's stream time; rows without a writer get the maximum", () => {
    const w = new WriterStreamTimes(
      new Map([
        ['t:0', 10_000],
        ['t:1', 100],
      ]),
    );
    expect(w.of({ writer: 't:1' })).toBe(100);
    expect(w.of({ writer: 't:0' })).toBe(10_000);
    expect(w.of({ writer: 't:9' })).toBe(Number.NEGATIVE_INFINITY); // no stream time persisted yet: nothing expired
    expect(w.of({ writer: null })).toBe(10_000);
    expect(new WriterStreamTimes(new Map()).of({ writer: null })).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe('parseKeyText', () => {
  it('decodes text per key serde', () => {
    expect(parseKeyText('string', 'a/b')).toBe('a/b');
    expect(parseKeyText('int64', '-9223372036854775808')).toBe(-(2n ** 63n));
    expect(parseKeyText('int', '42')).toBe(42);
    expect(parseKeyText('json', '{"id":1}')).toEqual({ id: 1 });
    expect(parseKeyText('tuple', '["eu",3]')).toEqual(['eu', 3]);
    expect(parseKeyText('buffer', Buffer.from('hi').toString('base64'))).toEqual(Buffer.from('hi'));
  });

  it('rejects bad text with INVALID_ARGUMENT', () => {
    for (const [serde, text] of [
      ['int64', '4.2'],
      ['int64', 'x'],
      ['int', '9007199254740993'],
      ['json', '{'],
      ['tuple', '{"a":1}'],
      ['tuple', '[1.5]'],
      ['buffer', '***'],
      ['weird', 'x'],
    ]) {
      expect(() => parseKeyText(serde, text)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', stage: 'lookup' }));
    }
  });

  it('round-trips through the serdes', () => {
    for (const [serde, text] of [
      ['int64', '123'],
      ['tuple', '["a",1]'],
      ['json', '[1,{"b":2}]'],
    ]) {
      const s = serdeByName(serde);
      expect(s.deserialize(s.serialize(parseKeyText(serde, text)))).toEqual(parseKeyText(serde, text));
    }
  });
});

describe('coerceKey / toJsonValue / cursors', () => {
  it('coerces keys like the worker does', () => {
    expect(coerceKey('int64', 5)).toBe(5n);
    expect(coerceKey('int64', '-5')).toBe(-5n);
    expect(coerceKey('string', 5)).toBe('5');
    expect(coerceKey('tuple', 'a')).toEqual(['a']);
  });

  it('makes values JSON-safe', () => {
    expect(toJsonValue({ b: Buffer.from('x'), n: 10n, a: [Buffer.from('y')], d: null })).toEqual({
      b: 'eA==',
      n: '10',
      a: ['eQ=='],
      d: null,
    });
  });

  it('a stored "__proto__" field stays data in the reply (never the reply object\'s prototype)', () => {
    const stored = JSON.parse('{"__proto__":{"polluted":true},"a":1}');
    const out = toJsonValue(stored) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('cursors are base64url and round-trip', () => {
    const k = Buffer.from([0xff, 0xfe, 0x00, 0x3f]);
    const c = encodeCursor(k);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).toEqual(k);
    expect(() => decodeCursor('a+b')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});

describe('TtlMemo', () => {
  it('caches within ttl, shares in-flight loads, reloads after expiry, never caches failures', async () => {
    const clock = new ManualClock(0);
    const memo = new TtlMemo<number>(1000, clock);
    let loads = 0;
    const load = async () => ++loads;
    const [a, b] = await Promise.all([memo.get('k', load), memo.get('k', load)]);
    expect([a, b, loads]).toEqual([1, 1, 1]);
    clock.advance(999);
    expect(await memo.get('k', load)).toBe(1);
    clock.advance(1);
    expect(await memo.get('k', load)).toBe(2);
    await expect(memo.get('bad', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await memo.get('bad', load)).toBe(3);
    const zero = new TtlMemo<number>(0, clock);
    await zero.get('k', load);
    await zero.get('k', load);
    expect(loads).toBe(5);
  });

  it('peek answers without a promise only what get would: a settled, fresh value; never a load in flight, an expired or a failed one', async () => {
    const clock = new ManualClock(0);
    const memo = new TtlMemo<number | null>(1000, clock);
    let release!: (v: number | null) => void;
    const pending = memo.get('k', () => new Promise((r) => (release = r)));
    expect(memo.peek('k')).toBeUndefined(); // in flight
    release(null);
    await pending;
    expect(memo.peek('k')).toEqual({ value: null }); // a settled null is a value
    clock.advance(999);
    expect(memo.peek('k')).toEqual({ value: null });
    clock.advance(1);
    expect(memo.peek('k')).toBeUndefined(); // expired: get would load again
    await expect(memo.get('bad', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(memo.peek('bad')).toBeUndefined();
    expect(memo.peek('never')).toBeUndefined();
    const zero = new TtlMemo<number>(0, clock);
    await zero.get('k', async () => 1);
    expect(zero.peek('k')).toBeUndefined(); // ttl 0 caches nothing
  });
});

describe('ReadCache', () => {
  it('is an LRU with per-store purge', () => {
    const c = new ReadCache({ maxEntries: 2, ttlMs: 60_000 });
    const k1 = ReadCache.keyOf('s1', 't_g1', Buffer.from('a'));
    const k2 = ReadCache.keyOf('s2', 't2_g1', Buffer.from('a'));
    c.set(k1, { value: 1 });
    c.set(k2, null);
    expect(c.get(k1)).toEqual({ v: { value: 1 } });
    expect(c.get(k2)).toEqual({ v: null });
    c.purgeStore('s1');
    expect(c.get(k1)).toBeUndefined();
    expect(c.size).toBe(1);
    expect(() => new ReadCache({ maxEntries: 0, ttlMs: 1 })).toThrow(RangeError);
  });

  it('expires entries by the injected clock', () => {
    const clock = new ManualClock();
    const c = new ReadCache({ maxEntries: 10, ttlMs: 5_000 }, clock);
    const k = ReadCache.keyOf('s', 't_g1', Buffer.from('a'));
    c.set(k, 'v1');
    clock.advance(4_999);
    expect(c.get(k)).toEqual({ v: 'v1' });
    clock.advance(2);
    expect(c.get(k)).toBeUndefined();
  });
});

describe('LookupContext on an injected clock', () => {
  const entry = (generation: number): StoreEntry => ({
    store: 's',
    kind: 'versioned',
    scope: 'global',
    keySerde: 'string',
    valueSerde: 'json',
    baseTable: 's',
    historyRetentionMs: 1_000,
    buckets: null,
    currentGeneration: generation,
    previousGeneration: null,
    previousDropAfter: null,
    buildingGeneration: null,
    droppingGeneration: null,
    lastGeneration: null,
    updatedAt: null,
  });

  it('reuses a catalog entry for generationCacheMs, reads it again after, and purges the read cache on a new generation', async () => {
    const clock = new ManualClock();
    const ctx = new LookupContext({} as Client, 'ks', {
      keyspace: 'ks',
      clock,
      generationCacheMs: 1_000,
      cache: { maxEntries: 10, ttlMs: 60_000 },
    });
    let generation = 1;
    // A versioned global table's columns are read once per generation table (its layout).
    const columnRow = { column_name: 'key', kind: 'partition_key', position: 0, type: 'blob' };
    jest.spyOn(ctx.exec, 'read').mockResolvedValue({ rows: [columnRow] } as never);
    const reads = jest.spyOn(ctx.catalog, 'get').mockImplementation(async () => entry(generation));
    expect((await ctx.resolve('s')).table).toBe('s_g1');
    const cached = ReadCache.keyOf('s', 's_g1', Buffer.from('k'));
    ctx.cache!.set(cached, 'v');
    generation = 2;
    clock.advance(999);
    expect((await ctx.resolve('s')).table).toBe('s_g1');
    expect(reads).toHaveBeenCalledTimes(1);
    clock.advance(1);
    expect((await ctx.resolve('s')).table).toBe('s_g2');
    expect(reads).toHaveBeenCalledTimes(2);
    expect(ctx.cache!.get(cached)).toBeUndefined();
  });

  it('waitUntilReady times out on the clock, polling every pollMs, without real waiting', async () => {
    const clock = new ManualClock();
    const ctx = new LookupContext({} as Client, 'ks', { keyspace: 'ks', clock });
    jest.spyOn(ctx.status, 'get').mockImplementation(async () => null);
    const polls = jest.spyOn(ctx.status, 'list').mockImplementation(async () => []);
    const wait = new ReadinessChecker(ctx).waitUntilReady('p', { timeoutMs: 10_000, pollMs: 1_000 });
    await expect(wait).rejects.toBeInstanceOf(ReadyTimeoutError);
    expect(clock.slept).toBe(10_000);
    expect(polls).toHaveBeenCalledTimes(11);
  });
});
