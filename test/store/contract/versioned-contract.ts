import { InvalidArgumentError } from '../../../src/errors';
import { PUT_RETURN_CODE_NOT_PUT, VersionedKeyValueStore } from '../../../src/store/types';

/** A store under test plus a way to reopen it on the same persisted data. */
export interface VersionedStoreHandle {
  store: VersionedKeyValueStore<string, string>;
  /** Closes the current instance and opens a new one on the same data and writer identity. */
  reopen(): Promise<VersionedKeyValueStore<string, string>>;
}

/** Creates a fresh, empty store (string keys and values). */
export type VersionedStoreFactory = (options: { historyRetentionMs: number }) => Promise<VersionedStoreHandle>;

const NOT_PUT = PUT_RETURN_CODE_NOT_PUT;

/** Registers the KIP-889/KIP-968 contract suite for one versioned store implementation. */
export function versionedStoreContract(name: string, factory: VersionedStoreFactory): void {
  describe(`${name}: versioned store contract`, () => {
    const opened: VersionedKeyValueStore<string, string>[] = [];
    async function open(historyRetentionMs = 100): Promise<VersionedStoreHandle> {
      const h = await factory({ historyRetentionMs });
      opened.push(h.store);
      return h;
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('in-order puts: each is latest, asOf reads pick the right version', async () => {
      const { store: s } = await open();
      expect(await s.put('a', 'v1', 10)).toBe(-1);
      expect(await s.put('a', 'v2', 20)).toBe(-1);
      expect(await s.get('a')).toEqual({ value: 'v2', timestamp: 20 });
      expect(await s.get('a', 15)).toEqual({ value: 'v1', timestamp: 10, validTo: 20 });
      expect(await s.get('a', 10)).toEqual({ value: 'v1', timestamp: 10, validTo: 20 });
      expect(await s.get('a', 19)).toEqual({ value: 'v1', timestamp: 10, validTo: 20 });
      expect(await s.get('a', 20)).toEqual({ value: 'v2', timestamp: 20 });
      expect(await s.get('a', 9)).toBeNull();
      expect(await s.get('missing')).toBeNull();
      expect(s.observedStreamTime()).toBe(20);
    });

    it('out-of-order puts return the next version as validTo', async () => {
      const { store: s } = await open();
      expect(await s.put('a', 'v3', 30)).toBe(-1);
      expect(await s.put('a', 'v1', 10)).toBe(30);
      expect(await s.put('a', 'v2', 20)).toBe(30);
      expect(await s.put('a', 'v0', 5)).toBe(10);
      expect(await s.get('a')).toEqual({ value: 'v3', timestamp: 30 });
      expect(await s.get('a', 15)).toEqual({ value: 'v1', timestamp: 10, validTo: 20 });
      expect(await s.get('a', 25)).toEqual({ value: 'v2', timestamp: 20, validTo: 30 });
      expect(await s.get('a', 7)).toEqual({ value: 'v0', timestamp: 5, validTo: 10 });
      expect(await s.get('a', 30)).toEqual({ value: 'v3', timestamp: 30 });
      // Late for the stream, but latest for this key.
      expect(await s.put('b', 'x', 12)).toBe(-1);
      expect(s.observedStreamTime()).toBe(30);
    });

    it('operations the caller does not await apply in call order (as Kafka applies its synchronous ones)', async () => {
      const { store: s } = await open();
      const answers = Promise.all([
        s.put('a', 'v3', 30),
        s.put('a', 'v1', 10),
        s.get('a', 15),
        s.put('a', 'v2', 20),
        s.delete('a', 40),
        s.get('a'),
        s.get('a', 35),
        s.put('b', 'x', 5),
        s.get('b'),
      ]);
      expect(await answers).toEqual([
        -1,
        30,
        { value: 'v1', timestamp: 10, validTo: 30 },
        30,
        { value: 'v3', timestamp: 30 },
        null,
        { value: 'v3', timestamp: 30, validTo: 40 },
        -1,
        { value: 'x', timestamp: 5 },
      ]);
    });

    it('close waits for the operations called before it, a put queued behind a read included', async () => {
      const { store: s } = await open();
      expect(await s.put('a', 'v3', 30)).toBe(-1);
      let settled = false;
      void s.get('a', 15);
      const late = s.put('a', 'v1', 10).finally(() => (settled = true));
      await s.close();
      expect(settled).toBe(true);
      expect(await late).toBe(30);
    });

    it('equal timestamps replace the version', async () => {
      const { store: s } = await open();
      expect(await s.put('a', 'x', 10)).toBe(-1);
      expect(await s.put('a', 'y', 10)).toBe(-1);
      expect(await s.get('a')).toEqual({ value: 'y', timestamp: 10 });
      expect(await s.put('a', 'z', 20)).toBe(-1);
      expect(await s.put('a', 'w', 10)).toBe(20);
      expect(await s.get('a', 10)).toEqual({ value: 'w', timestamp: 10, validTo: 20 });
      expect(await s.history('a', { order: 'asc' })).toEqual([
        { value: 'w', timestamp: 10, validTo: 20 },
        { value: 'z', timestamp: 20 },
      ]);
      // a value replaced by a tombstone at the same time, and back
      expect(await s.put('a', null, 20)).toBe(-1);
      expect(await s.get('a')).toBeNull();
      expect(await s.put('a', 'z2', 20)).toBe(-1);
      expect(await s.get('a')).toEqual({ value: 'z2', timestamp: 20 });
    });

    it('tombstones in order', async () => {
      const { store: s } = await open();
      await s.put('a', 'v', 10);
      expect(await s.put('a', null, 20)).toBe(-1);
      expect(await s.get('a')).toBeNull();
      expect(await s.get('a', 15)).toEqual({ value: 'v', timestamp: 10, validTo: 20 });
      expect(await s.get('a', 20)).toBeNull();
      expect(await s.get('a', 25)).toBeNull();
      expect(await s.put('a', 'v3', 30)).toBe(-1);
      expect(await s.get('a')).toEqual({ value: 'v3', timestamp: 30 });
      expect(await s.get('a', 29)).toBeNull();
    });

    it('tombstones out of order, and late puts before a tombstone', async () => {
      const { store: s } = await open();
      await s.put('a', 'v1', 10);
      await s.put('a', 'v3', 30);
      expect(await s.put('a', null, 20)).toBe(30);
      expect(await s.get('a', 25)).toBeNull();
      expect(await s.get('a', 15)).toEqual({ value: 'v1', timestamp: 10, validTo: 20 });
      expect(await s.get('a')).toEqual({ value: 'v3', timestamp: 30 });
      expect(await s.put('b', null, 50)).toBe(-1);
      expect(await s.put('b', 'x', 40)).toBe(50);
      expect(await s.get('b')).toBeNull();
      expect(await s.get('b', 45)).toEqual({ value: 'x', timestamp: 40, validTo: 50 });
      expect(await s.get('b', 50)).toBeNull();
    });

    it('delete returns the record valid at its time and writes a tombstone', async () => {
      const { store: s } = await open();
      await s.put('a', 'v1', 10);
      expect(await s.delete('a', 15)).toEqual({ value: 'v1', timestamp: 10 });
      expect(await s.get('a')).toBeNull();
      expect(await s.get('a', 12)).toEqual({ value: 'v1', timestamp: 10, validTo: 15 });
      expect(await s.delete('a', 20)).toBeNull();
      expect(await s.delete('unknown', 5)).toBeNull();
      expect(s.observedStreamTime()).toBe(20);
      await s.put('c', 'c1', 10);
      await s.put('c', 'c2', 30);
      expect(await s.delete('c', 20)).toEqual({ value: 'c1', timestamp: 10, validTo: 30 });
      expect(await s.get('c', 25)).toBeNull();
      expect(await s.get('c')).toEqual({ value: 'c2', timestamp: 30 });
      expect(await s.delete('c', 30)).toEqual({ value: 'c2', timestamp: 30 });
      expect(await s.get('c')).toBeNull();
    });

    it('expired deletes return null and change nothing', async () => {
      const { store: s } = await open(100);
      await s.put('e', 'v', 250);
      await s.put('z', 'z', 400);
      expect(await s.delete('e', 299)).toBeNull();
      expect(await s.get('e')).toEqual({ value: 'v', timestamp: 250 });
      expect(await s.delete('e', 300)).toEqual({ value: 'v', timestamp: 250 });
      expect(await s.get('e')).toBeNull();
      expect(s.observedStreamTime()).toBe(400);
    });

    it('grace boundary: exactly streamTime - retention is accepted, one below is rejected', async () => {
      const { store: s } = await open(100);
      expect(await s.put('x', 'a', 1000)).toBe(-1);
      expect(await s.put('x', 'b', 900)).toBe(1000);
      expect(await s.put('x', 'c', 899)).toBe(NOT_PUT);
      expect(await s.put('y', 'c', 899)).toBe(NOT_PUT);
      expect(s.observedStreamTime()).toBe(1000);
      expect(await s.get('y')).toBeNull();
      expect(await s.get('x', 900)).toEqual({ value: 'b', timestamp: 900, validTo: 1000 });
      expect(await s.get('x', 899)).toBeNull();
      expect(await s.delete('x', 899)).toBeNull();
      expect(await s.delete('x', 900)).toEqual({ value: 'b', timestamp: 900, validTo: 1000 });
      expect(await s.get('x', 950)).toBeNull();
      expect(await s.get('x')).toEqual({ value: 'a', timestamp: 1000 });
    });

    it('zero retention: only puts at or after stream time are accepted', async () => {
      const { store: s } = await open(0);
      expect(await s.put('k', 'a', 10)).toBe(-1);
      expect(await s.put('k', 'b', 10)).toBe(-1);
      expect(await s.put('k', 'c', 9)).toBe(NOT_PUT);
      expect(await s.get('k', 9)).toBeNull();
      expect(await s.get('k', 10)).toEqual({ value: 'b', timestamp: 10 });
    });

    it('reads below the retention horizon only return an eligible latest version', async () => {
      const { store: s } = await open(100);
      await s.put('k', 'v1', 100);
      await s.put('k', 'v2', 200);
      await s.put('t', 'tv', 100);
      await s.put('t', null, 200);
      await s.put('o', 'o', 1000);
      expect(await s.get('k', 150)).toBeNull();
      expect(await s.get('k', 500)).toEqual({ value: 'v2', timestamp: 200 });
      expect(await s.get('k', 899)).toEqual({ value: 'v2', timestamp: 200 });
      expect(await s.get('k', 950)).toEqual({ value: 'v2', timestamp: 200 });
      expect(await s.get('k')).toEqual({ value: 'v2', timestamp: 200 });
      expect(await s.get('t', 150)).toBeNull();
      expect(await s.get('t', 500)).toBeNull();
      expect(await s.history('k')).toEqual([{ value: 'v2', timestamp: 200 }]);
    });

    it('history excludes expired versions', async () => {
      const { store: s } = await open(100);
      await s.put('h', 'v1', 100);
      await s.put('h', 'v2', 500);
      await s.put('h', 'v3', 950);
      await s.put('o', 'o', 1000);
      expect(await s.history('h', { order: 'asc' })).toEqual([
        { value: 'v2', timestamp: 500, validTo: 950 },
        { value: 'v3', timestamp: 950 },
      ]);
      await s.put('o', 'o', 1050); // horizon 950: v2 (validTo 950) expires
      expect(await s.history('h', { order: 'desc' })).toEqual([{ value: 'v3', timestamp: 950 }]);
    });

    it('history honours bounds, order and validTo', async () => {
      const { store: s } = await open(10_000);
      await s.put('k', 'c', 40);
      await s.put('k', 'a', 10);
      await s.put('k', null, 30);
      await s.put('k', 'b', 20);
      const a = { value: 'a', timestamp: 10, validTo: 20 };
      const b = { value: 'b', timestamp: 20, validTo: 30 };
      const c = { value: 'c', timestamp: 40 };
      // Without an order: newest first, as Kafka Streams answers ResultOrder.ANY.
      expect(await s.history('k')).toEqual([c, b, a]);
      expect(await s.history('k', { order: 'asc' })).toEqual([a, b, c]);
      expect(await s.history('k', { order: 'desc' })).toEqual([c, b, a]);
      expect(await s.history('k', { fromTime: 20, toTime: 35 })).toEqual([b]);
      expect(await s.history('k', { fromTime: 19, toTime: 40, order: 'asc' })).toEqual([a, b, c]);
      expect(await s.history('k', { fromTime: 19, toTime: 40, order: 'desc' })).toEqual([c, b, a]);
      expect(await s.history('k', { fromTime: 25, toTime: 25 })).toEqual([b]);
      expect(await s.history('k', { fromTime: 30, toTime: 39 })).toEqual([]);
      expect(await s.history('k', { fromTime: 40, toTime: 40 })).toEqual([c]);
      expect(await s.history('k', { fromTime: 1000 })).toEqual([c]);
      expect(await s.history('k', { toTime: 9 })).toEqual([]);
      expect(await s.history('k', { toTime: 10 })).toEqual([a]);
      // Kafka's whole range (Long.MIN_VALUE..Long.MAX_VALUE as numbers) and negative times are valid bounds.
      expect(await s.history('k', { fromTime: -(2 ** 63), toTime: 2 ** 63, order: 'asc' })).toEqual([a, b, c]);
      expect(await s.history('k', { toTime: -1 })).toEqual([]);
      expect(await s.get('k', -1)).toBeNull();
      expect(await s.get('k', 2 ** 63)).toEqual(c);
      expect(await s.history('nope')).toEqual([]);
    });

    it('many keys with interleaved versions', async () => {
      const { store: s } = await open(1_000_000);
      const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
      for (let round = 0; round < 3; round++) {
        await Promise.all(keys.map((k, i) => s.put(k, `${k}@${round}`, 100 * round + i)));
      }
      for (const [i, k] of keys.entries()) {
        expect(await s.get(k)).toEqual({ value: `${k}@2`, timestamp: 200 + i });
        expect(await s.get(k, 150)).toEqual({ value: `${k}@1`, timestamp: 100 + i, validTo: 200 + i });
        expect(await s.get(k, 99)).toEqual({ value: `${k}@0`, timestamp: i, validTo: 100 + i });
      }
      expect((await s.history('key-7', { order: 'asc' })).map((r) => r.timestamp)).toEqual([7, 107, 207]);
    });

    it('persists stream time across a restart (flush then reopen)', async () => {
      const h = await open(100);
      await h.store.put('a', 'v1', 300);
      await h.store.put('b', 'v2', 500);
      await h.store.flush();
      const s = await h.reopen();
      opened.push(s);
      expect(s.observedStreamTime()).toBe(500);
      expect(await s.put('a', 'late', 399)).toBe(NOT_PUT);
      expect(await s.put('a', 'ok', 400)).toBe(-1);
      expect(await s.get('a', 350)).toBeNull();
      expect(await s.get('a', 450)).toEqual({ value: 'ok', timestamp: 400 });
      expect(await s.get('b')).toEqual({ value: 'v2', timestamp: 500 });
    });

    it('rejects bad input with typed errors and writes nothing', async () => {
      const { store: s } = await open();
      const bad = [
        () => s.put(null as unknown as string, 'v', 1),
        () => s.put(undefined as unknown as string, 'v', 1),
        () => s.put('a', 'v', -1),
        () => s.put('a', 'v', 1.5),
        () => s.put('a', 'v', Number.NaN),
        () => s.put('a', 'v', Number.POSITIVE_INFINITY),
        () => s.put('a', 'v', '5' as unknown as number),
        () => s.put('a', 123 as unknown as string, 1),
        () => s.put('a', { x: 1 } as unknown as string, 2),
        () => s.delete(null as unknown as string, 1),
        () => s.delete('a', Number.NaN),
        () => s.get(null as unknown as string),
        () => s.get('a', 1.5),
        () => s.get('a', Number.NaN),
        () => s.history('a', { fromTime: Number.NEGATIVE_INFINITY }),
        () => s.history('a', { toTime: 0.5 }),
        // fromTime after toTime is refused, as Kafka's MultiVersionedKeyQuery does (equal is allowed).
        () => s.history('a', { fromTime: 35, toTime: 20 }),
      ];
      for (const op of bad) {
        await expect(op()).rejects.toBeInstanceOf(InvalidArgumentError);
      }
      expect(s.observedStreamTime()).toBe(Number.NEGATIVE_INFINITY);
      expect(await s.get('a')).toBeNull();
      expect(await s.history('a')).toEqual([]);
    });
  });
}
