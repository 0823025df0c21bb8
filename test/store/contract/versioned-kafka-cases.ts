import { PUT_RETURN_CODE_NOT_PUT, PUT_RETURN_CODE_VALID_TO_UNDEFINED, VersionedKeyValueStore } from '../../../src/store/types';
import { VersionedStoreFactory } from './versioned-contract';

// Scenarios of Kafka's RocksDBVersionedStoreTest (KIP-889 puts and gets, KIP-968 validTo and history), restated for
// this store API. Kafka's segments do not exist here; the timestamps that straddled segment boundaries are kept.
const R = 300_000; // history retention (= grace period)
const S = 100_000; // Kafka's segment interval in those tests
const B = 10; // base timestamp
const LATEST = PUT_RETURN_CODE_VALID_TO_UNDEFINED;

type Expected = [value: string, timestamp: number, validTo?: number];

/** A small DSL over one store: put with expected return, as-of get with expected record, history newest first. */
function dsl(s: VersionedKeyValueStore<string, string>) {
  const rec = (e: Expected) => (e[2] === undefined ? { value: e[0], timestamp: e[1] } : { value: e[0], timestamp: e[1], validTo: e[2] });
  return {
    put: async (k: string, v: string | null, t: number, expected: number) => expect(await s.put(k, v, t)).toBe(expected),
    latest: async (k: string, e: Expected | null) => expect(await s.get(k)).toEqual(e === null ? null : rec(e)),
    at: async (k: string, t: number, e: Expected | null) => expect(await s.get(k, t)).toEqual(e === null ? null : rec(e)),
    history: async (k: string, from: number, to: number, e: Expected[]) => {
      expect(await s.history(k, { fromTime: from, toTime: to, order: 'desc' })).toEqual(e.map(rec));
      expect(await s.history(k, { fromTime: from, toTime: to, order: 'asc' })).toEqual(e.map(rec).reverse());
    },
  };
}

/** Registers Kafka's RocksDBVersionedStoreTest scenarios for one versioned store implementation. */
export function versionedKafkaCases(name: string, factory: VersionedStoreFactory): void {
  describe(`${name}: Kafka RocksDBVersionedStoreTest scenarios`, () => {
    const opened: VersionedKeyValueStore<string, string>[] = [];
    async function open(historyRetentionMs = R) {
      const h = await factory({ historyRetentionMs });
      opened.push(h.store);
      return { s: h.store, ...dsl(h.store) };
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('shouldPutLatest / shouldPutNullAsLatest', async () => {
      const { put, latest, at } = await open();
      await put('k', 'v', B, LATEST);
      await put('k', 'v2', B + 1, LATEST);
      await latest('k', ['v2', B + 1]);
      await at('k', B, ['v', B, B + 1]);
      await at('k', B + 1, ['v2', B + 1]);
      await at('k', B + 2, ['v2', B + 1]);
      await put('n', null, B, LATEST);
      await put('n', null, B + 1, LATEST);
      await latest('n', null);
      for (const t of [B, B + 1, B + 2]) await at('n', t, null);
    });

    it('shouldPutOlderWithNonNullLatest / shouldPutOlderWithNullLatest', async () => {
      const { put, latest, at } = await open();
      for (const [k, top] of [
        ['k', 'v'],
        ['n', null],
      ] as const) {
        await put(k, top, B, LATEST);
        await put(k, 'v2', B - 2, B);
        await put(k, 'v1', B - 1, B);
        await put(k, 'v4', B - 4, B - 2);
        await latest(k, top === null ? null : [top, B]);
        await at(k, B, top === null ? null : [top, B]);
        await at(k, B - 1, ['v1', B - 1, B]);
        await at(k, B - 2, ['v2', B - 2, B - 1]);
        await at(k, B - 3, ['v4', B - 4, B - 2]);
      }
    });

    it('shouldPutOlderNullWithNonNullLatest / shouldPutOlderNullWithNullLatest', async () => {
      const { put, latest, at } = await open();
      for (const [k, top] of [
        ['k', 'v'],
        ['n', null],
      ] as const) {
        await put(k, top, B, LATEST);
        await put(k, null, B - 2, B);
        await put(k, null, B - 1, B);
        await put(k, null, B - 4, B - 2);
        await put(k, 'v5', B - 5, B - 4);
        await put(k, 'v3', B - 3, B - 2);
        await put(k, null, B - 6, B - 5);
        await latest(k, top === null ? null : [top, B]);
        await at(k, B, top === null ? null : [top, B]);
        await at(k, B - 1, null);
        await at(k, B - 2, null);
        await at(k, B - 3, ['v3', B - 3, B - 2]);
        await at(k, B - 4, null);
        await at(k, B - 5, ['v5', B - 5, B - 4]);
        await at(k, B - 6, null);
      }
    });

    it('shouldPutRepeatTimestampAsLatest', async () => {
      const { put, latest, at } = await open();
      await put('k', 'to_be_replaced', B, LATEST);
      await put('k', 'b', B, LATEST);
      await latest('k', ['b', B]);
      await at('k', B, ['b', B]);
      await at('k', B - 1, null);
      for (let i = 0; i < 2; i++) {
        await put('k', null, B, LATEST);
        await latest('k', null);
        await at('k', B, null);
        await at('k', B - 1, null);
      }
      await put('k', 'b', B, LATEST);
      await latest('k', ['b', B]);
      await at('k', B, ['b', B]);
    });

    it('shouldPutRepeatTimestamps', async () => {
      const { put, latest, at } = await open();
      await put('k', 'to_be_replaced', S + 20, LATEST);
      await put('k', null, S - 10, S + 20);
      await put('k', 'to_be_replaced', S - 10, S + 20);
      await put('k', null, S - 10, S + 20);
      await put('k', 'to_be_replaced', S - 1, S + 20);
      await put('k', 'to_be_replaced', S + 1, S + 20);
      await put('k', null, S - 1, S + 1);
      await put('k', null, S + 1, S + 20);
      await put('k', null, S + 10, S + 20);
      await put('k', null, S + 5, S + 10);
      await put('k', 'vp5', S + 5, S + 10);
      await put('k', 'to_be_replaced', S - 5, S - 1);
      await put('k', 'vn5', S - 5, S - 1);
      await put('k', null, S + 20, LATEST);
      await put('k', null, S + 20, LATEST);
      await put('k', 'vn6', S - 6, S - 5);
      await latest('k', null);
      await at('k', S + 30, null);
      await at('k', S + 15, null);
      await at('k', S + 6, ['vp5', S + 5, S + 10]);
      await at('k', S + 2, null);
      await at('k', S, null);
      await at('k', S - 1, null);
      await at('k', S - 5, ['vn5', S - 5, S - 1]);
      await at('k', S - 6, ['vn6', S - 6, S - 5]);
      await at('k', S - 8, null);
    });

    it('shouldMoveRecordToOlderSegmentDuringPut / shouldFallThroughToExistingOlderSegmentAsLatestDuringPut', async () => {
      const { put, latest, at } = await open();
      await put('k', 'vp20', S + 20, LATEST);
      await put('k', 'vp10', S + 10, S + 20);
      await put('k', 'vn10', S - 10, S + 10);
      await put('k', 'vn2', S - 2, S + 10);
      await put('k', 'vn1', S - 1, S + 10);
      await put('k', 'vp1', S + 1, S + 10);
      await latest('k', ['vp20', S + 20]);
      await at('k', S + 30, ['vp20', S + 20]);
      await at('k', S + 15, ['vp10', S + 10, S + 20]);
      await at('k', S + 5, ['vp1', S + 1, S + 10]);
      await at('k', S, ['vn1', S - 1, S + 1]);
      await at('k', S - 1, ['vn1', S - 1, S + 1]);
      await at('k', S - 2, ['vn2', S - 2, S - 1]);
      await at('k', S - 5, ['vn10', S - 10, S - 2]);

      await put('f', null, S - 5, LATEST);
      await put('f', 'vn6', S - 6, S - 5);
      await put('f', 'vp20', S + 20, LATEST);
      await put('f', null, S + 10, S + 20);
      await put('f', null, S - 1, S + 10);
      await put('f', 'vn2', S - 2, S - 1);
      await latest('f', ['vp20', S + 20]);
      await at('f', S + 30, ['vp20', S + 20]);
      await at('f', S + 12, null);
      await at('f', S, null);
      await at('f', S - 2, ['vn2', S - 2, S - 1]);
      await at('f', S - 5, null);
      await at('f', S - 6, ['vn6', S - 6, S - 5]);
    });

    it('shouldPutNonLatestTombstoneIntoNewSegmentWithValidTo', async () => {
      const { put, latest, at } = await open();
      await put('k', 'vp30', S + 30, LATEST);
      await put('k', null, S - 10, S + 30);
      await put('k', 'vn5', S - 5, S + 30);
      await put('k', 'vn1', S - 1, S + 30);
      await put('k', null, S - 2, S - 1);
      await latest('k', ['vp30', S + 30]);
      await at('k', S + 10, ['vn1', S - 1, S + 30]);
      await at('k', S - 1, ['vn1', S - 1, S + 30]);
      await at('k', S - 2, null);
      await at('k', S - 5, ['vn5', S - 5, S - 2]);
      await at('k', S - 10, null);
    });

    it('shouldDelete: returns the record valid at the delete time, with its validTo', async () => {
      const { s, put, latest } = await open();
      await put('k', 'vp20', S + 20, LATEST);
      await put('k', 'vp10', S + 10, S + 20);
      await put('k', 'vn10', S - 10, S + 10);
      await put('k', 'vn2', S - 2, S + 10);
      expect(await s.delete('k', S - 5)).toEqual({ value: 'vn10', timestamp: S - 10, validTo: S - 2 });
      expect(await s.delete('k', S + 10)).toEqual({ value: 'vp10', timestamp: S + 10, validTo: S + 20 });
      expect(await s.delete('k', S + 10)).toBeNull();
      expect(await s.delete('k', S + 25)).toEqual({ value: 'vp20', timestamp: S + 20 });
      await latest('k', null);
    });

    it('shouldNotPutExpired / shouldNotDeleteExpired', async () => {
      const { s, put, latest } = await open();
      await put('d1', 'v1', 1, LATEST);
      await put('d2', 'v2', 1, LATEST);
      await put('k', 'v', R + 10, LATEST); // horizon 10
      await put('k1', 'v1', 10, LATEST);
      await latest('k1', ['v1', 10]);
      await put('k2', 'v2', 9, PUT_RETURN_CODE_NOT_PUT);
      await latest('k2', null);
      expect(await s.delete('d1', 10)).toEqual({ value: 'v1', timestamp: 1 });
      await latest('d1', null);
      expect(await s.delete('d2', 9)).toBeNull();
      await latest('d2', ['v2', 1]);
    });

    it('shouldGetFromOlderSegments / shouldDistinguishEmptyAndNull', async () => {
      const { put, at } = await open();
      await put('ko', null, S - 10, LATEST);
      await put('ko', null, 2 * S - 10, LATEST);
      await put('ko', null, 3 * S - 10, LATEST);
      await at('k', S - 20, null);
      await put('k', 'v', S - 20, LATEST);
      await put('k', null, S - 10, LATEST);
      await at('k', S - 30, null);
      await at('k', S - 15, ['v', S - 20, S - 10]);
      await at('k', S - 5, null);
      await put('k', 'v2', 3 * S - 20, LATEST);
      await put('k', null, 3 * S - 10, LATEST);
      await at('k', S - 30, null);
      await at('k', S - 15, ['v', S - 20, S - 10]);
      await at('k', S - 5, null);
      // the empty string is a value, not a tombstone
      await put('e', null, S + 20, LATEST);
      await put('e', '', S + 5, S + 20);
      await put('e', '', S - 5, S + 5);
      await at('e', S + 6, ['', S + 5, S + 20]);
      await at('e', S - 5, ['', S - 5, S + 5]);
      await at('e', S + 21, null);
    });

    it('shouldNotGetExpired / shouldGetExpiredIfLatestValue: below the horizon only the latest answers, without validTo', async () => {
      const { put, at } = await open();
      await put('k', 'v_old', 0, LATEST);
      await put('k', 'v', S - 10, LATEST);
      await at('k', S - 11, ['v_old', 0, S - 10]);
      await put('ko', 'vo', R + S - 11, LATEST); // horizon S - 11: asOf S - 11 is still inside
      await at('k', S - 11, ['v_old', 0, S - 10]);
      await put('ko', 'vo2', R + S - 10, LATEST); // horizon S - 10
      await at('k', S - 11, null);
      await at('k', S - 10, ['v', S - 10]);
      await at('k', S - 9, ['v', S - 10]);

      await put('l', 'v', S, LATEST);
      await put('lo', 'vo_old', S, LATEST);
      await put('lo', 'vo_new', R + S + 12, LATEST); // horizon S + 12
      await at('l', S + 10, ['v', S]); // expired get, but the latest satisfies the bound
      await at('lo', S + 10, null); // expired get, and the latest does not
    });

    it('shouldGetRecordVersionsFromOlderSegments (KIP-968 history with validTo)', async () => {
      const { put, history } = await open();
      await put('ko', null, S - 10, LATEST);
      await put('ko', null, 3 * S - 10, LATEST);
      await history('k', S - 20, S, []);
      await put('k', 'v1', S - 30, LATEST);
      await put('k', 'v2', S - 25, LATEST);
      await put('k', null, S - 20, LATEST);
      await put('k', null, S - 15, LATEST);
      await put('k', 'v3', S - 10, LATEST);
      await put('k', 'v4', S - 5, LATEST);
      const v1: Expected = ['v1', S - 30, S - 25];
      const v2: Expected = ['v2', S - 25, S - 20];
      const v3: Expected = ['v3', S - 10, S - 5];
      const v4: Expected = ['v4', S - 5];
      await history('k', S - 40, S - 35, []);
      await history('k', S - 30, S - 5, [v4, v3, v2, v1]);
      await history('k', 0, Number.MAX_SAFE_INTEGER, [v4, v3, v2, v1]);
      await history('k', S - 4, S, [v4]);
      await history('k', S - 5, S - 5, [v4]);
      await history('k', S - 4, S - 4, [v4]);
      await history('k', S - 31, S - 21, [v2, v1]);
      await history('k', S - 24, S - 11, [v2]);
      await history('k', S - 11, S - 4, [v4, v3]);
      await history('k', S - 26, S - 5, [v4, v3, v2, v1]);
      await history('k', S - 15, S - 10, [v3]);
      await history('k', S - 19, S - 16, []);
    });

    it('history below the horizon follows get: at most the newest version, if a value at or before toTime, without validTo', async () => {
      const { put, history, at } = await open(100);
      await put('k', 'v1', 100, LATEST);
      await put('k', 'v2', 200, LATEST);
      await put('t', 'tv', 100, LATEST);
      await put('t', null, 200, LATEST);
      await put('o', 'o', 1000, LATEST); // horizon 900
      await history('k', 0, 899, [['v2', 200]]);
      await history('k', 150, 199, []); // v1 was valid then, but expired: get(k, 150) is null too
      await at('k', 150, null);
      await history('k', 0, 150, []);
      await history('t', 0, 899, []);
      await history('t', 0, 150, []);
      await history('k', 0, 900, [['v2', 200]]); // at the horizon: the normal rule (v1 expired: validTo 200 ≤ 900)
      await put('k', 'v3', 950, LATEST);
      await history('k', 0, 899, []); // the newest (v3 at 950) is after toTime
      await history('k', 0, 900, [['v2', 200, 950]]); // toTime at the horizon: v2 is valid after it
      await history('k', 0, 1000, [
        ['v3', 950],
        ['v2', 200, 950],
      ]);
    });
  });
}
