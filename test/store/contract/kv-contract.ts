import { InvalidArgumentError } from '../../../src/errors';
import { bufferSerde, intKeySerde, stringSerde, tupleKeySerde, TupleElement } from '../../../src/store/serde';
import { KeyValue, KeyValueStore, Serde } from '../../../src/store/types';

/** Creates a fresh, empty key-value store with the given key serde and string values. */
export type KvStoreFactory = <K>(keySerde: Serde<K>) => Promise<KeyValueStore<K, string>>;

async function collect<K, V>(it: AsyncIterable<KeyValue<K, V>>): Promise<KeyValue<K, V>[]> {
  const out: KeyValue<K, V>[] = [];
  for await (const kv of it) out.push(kv);
  return out;
}

const keysOf = <K, V>(kvs: KeyValue<K, V>[]): K[] => kvs.map((kv) => kv.key);

/** Registers the key-value contract suite for one store implementation. */
export function kvStoreContract(name: string, factory: KvStoreFactory): void {
  describe(`${name}: key-value store contract`, () => {
    const opened: KeyValueStore<unknown, string>[] = [];
    async function open<K>(keySerde: Serde<K>): Promise<KeyValueStore<K, string>> {
      const s = await factory(keySerde);
      opened.push(s as KeyValueStore<unknown, string>);
      return s;
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('get, put, overwrite, delete', async () => {
      const s = await open(stringSerde);
      expect(await s.get('a')).toBeNull();
      await s.put('a', '1');
      expect(await s.get('a')).toBe('1');
      await s.put('a', '2');
      expect(await s.get('a')).toBe('2');
      expect(await s.delete('a')).toBe('2');
      expect(await s.get('a')).toBeNull();
      expect(await s.delete('a')).toBeNull();
      await s.put('b', 'x');
      await s.put('b', null);
      expect(await s.get('b')).toBeNull();
      await s.put('empty', '');
      expect(await s.get('empty')).toBe('');
    });

    it('putIfAbsent only writes absent keys', async () => {
      const s = await open(stringSerde);
      expect(await s.putIfAbsent('a', 'first')).toBeNull();
      expect(await s.putIfAbsent('a', 'second')).toBe('first');
      expect(await s.get('a')).toBe('first');
    });

    it('putAll applies values and deletions', async () => {
      const s = await open(stringSerde);
      await s.putAll([
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
        { key: 'c', value: '3' },
      ]);
      await s.putAll([
        { key: 'b', value: null },
        { key: 'c', value: '33' },
      ]);
      expect(await collect(s.all())).toEqual([
        { key: 'a', value: '1' },
        { key: 'c', value: '33' },
      ]);
    });

    it('range, reverseRange, all, reverseAll in encoded-byte order', async () => {
      const s = await open(stringSerde);
      const keys = ['m', 'a', 'z', 'b', 'ab', 'aa', 'y', 'é', 'B'];
      for (const k of keys) await s.put(k, `v-${k}`);
      const sorted = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(keysOf(await collect(s.all()))).toEqual(sorted);
      expect(keysOf(await collect(s.reverseAll()))).toEqual([...sorted].reverse());
      expect(keysOf(await collect(s.range('ab', 'y')))).toEqual(['ab', 'b', 'm', 'y']);
      expect(keysOf(await collect(s.reverseRange('ab', 'y')))).toEqual(['y', 'm', 'b', 'ab']);
      expect(keysOf(await collect(s.range(undefined, 'aa')))).toEqual(['B', 'a', 'aa']);
      expect(keysOf(await collect(s.range('y')))).toEqual(['y', 'z', 'é']);
      expect(keysOf(await collect(s.range('zz', 'a')))).toEqual([]);
      expect(await collect(s.range('m', 'm'))).toEqual([{ key: 'm', value: 'v-m' }]);
    });

    it('integer keys scan in numeric order', async () => {
      const s = await open(intKeySerde);
      const nums = [5, -3, 0, 1000, -1000, 42, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
      for (const n of nums) await s.put(n, String(n));
      const sorted = [...nums].sort((a, b) => a - b);
      expect(keysOf(await collect(s.all()))).toEqual(sorted);
      expect(keysOf(await collect(s.range(-3, 42)))).toEqual([-3, -1, 0, 5, 42]);
      expect(keysOf(await collect(s.reverseRange(-1000, 0)))).toEqual([0, -1, -3, -1000]);
    });

    it('prefixScan over tuple, string and 0xFF-byte prefixes', async () => {
      const t = await open(tupleKeySerde);
      const tk: TupleElement[][] = [
        ['user', 2],
        ['user', 1],
        ['user2', 1],
        ['usr', 0],
        ['user', 1, 'x'],
        ['use', 9],
      ];
      for (const k of tk) await t.put(k, JSON.stringify(k));
      expect(keysOf(await collect(t.prefixScan(['user'], tupleKeySerde)))).toEqual([
        ['user', 1],
        ['user', 1, 'x'],
        ['user', 2],
      ]);
      expect(keysOf(await collect(t.prefixScan(['user', 1], tupleKeySerde)))).toEqual([
        ['user', 1],
        ['user', 1, 'x'],
      ]);

      const s = await open(stringSerde);
      for (const k of ['a', 'ab', 'abc', 'abd', 'ac', 'b']) await s.put(k, k);
      expect(keysOf(await collect(s.prefixScan('ab', stringSerde)))).toEqual(['ab', 'abc', 'abd']);
      expect(keysOf(await collect(s.prefixScan('', stringSerde)))).toHaveLength(6);

      const b = await open(bufferSerde);
      const bk = [Buffer.from([0xff]), Buffer.from([0xff, 0xff]), Buffer.from([0xff, 0xff, 0x01]), Buffer.from([0xfe, 0xff])];
      for (const k of bk) await b.put(k, k.toString('hex'));
      const got = keysOf(await collect(b.prefixScan(Buffer.from([0xff, 0xff]), bufferSerde))).map((k) => k.toString('hex'));
      expect(got).toEqual(['ffff', 'ffff01']);
    });

    it('many keys come back complete and ordered', async () => {
      const s = await open(intKeySerde);
      const n = 300;
      const order = Array.from({ length: n }, (_, i) => (i * 7919) % n);
      await Promise.all(order.map((i) => s.put(i, `v${i}`)));
      const all = await collect(s.all());
      expect(keysOf(all)).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(all[123]).toEqual({ key: 123, value: 'v123' });
      expect(keysOf(await collect(s.reverseRange(100, 199)))).toEqual(Array.from({ length: 100 }, (_, i) => 199 - i));
      expect(await s.approximateNumEntries()).toBe(n);
    });

    it('rejects bad input with typed errors and writes nothing', async () => {
      const s = await open(stringSerde);
      const bad = [
        () => s.put(null as unknown as string, 'v'),
        () => s.get(undefined as unknown as string),
        () => s.put('a', 5 as unknown as string),
        () => s.putIfAbsent('a', {} as unknown as string),
        () =>
          s.putAll([
            { key: 'ok', value: 'v' },
            { key: 'a', value: 7 as unknown as string },
          ]),
        () => s.delete(null as unknown as string),
      ];
      for (const op of bad) await expect(op()).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await collect(s.all())).toEqual([]);
    });
  });
}
