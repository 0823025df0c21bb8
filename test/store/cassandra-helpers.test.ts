import { InvalidIdentifierError } from '../../src/errors';
import { baseTableForStore, tableNameForStore, validateKeyspaceName } from '../../src/store/cassandra/identifiers';
import { bucketOf } from '../../src/store/cassandra/key-bucket';
import { versionedStatements } from '../../src/store/cassandra/layout';
import { mergeSorted } from '../../src/store/cassandra/paging';
import { RetentionCleaner } from '../../src/store/cassandra/retention-cleaner';
import { renderReplication } from '../../src/store/cassandra/schema';
import { defaultCompactionFor, prepareTableOptions, renderTableOptions } from '../../src/store/cassandra/table-options';
import { asOfAnswer, collectHistory, RawVersion } from '../../src/store/cassandra/versioned-table-reader';

async function* from<T>(xs: T[]): AsyncGenerator<T> {
  for (const x of xs) yield x;
}

describe('cassandra helpers (no database)', () => {
  it('normalises store names and validates identifiers', () => {
    expect(tableNameForStore('TEXT3.word-count2')).toBe('text3_word_count2');
    expect(() => tableNameForStore('x; DROP TABLE y')).toThrow(InvalidIdentifierError);
    expect(() => tableNameForStore('9lives')).toThrow(/normalises/);
    expect(() => tableNameForStore('a'.repeat(49))).toThrow(InvalidIdentifierError);
  });
  it('keeps short base tables as they were and makes long ones unique with a hash of the full store name', () => {
    expect(baseTableForStore('TEXT3.word-count2')).toBe('text3_word_count2');
    expect(baseTableForStore('a'.repeat(40))).toBe('a'.repeat(40));
    const x = baseTableForStore(`${'a'.repeat(40)}x`);
    const y = baseTableForStore(`${'a'.repeat(40)}y`);
    expect(x).toMatch(/^a{31}_[0-9a-f]{8}$/);
    expect(y).toMatch(/^a{31}_[0-9a-f]{8}$/);
    expect(x).not.toBe(y);
    expect(baseTableForStore(`${'a'.repeat(40)}x`)).toBe(x); // stable
    expect(`${x}_g999999`.length).toBeLessThanOrEqual(48);
    expect(() => baseTableForStore('x; DROP TABLE y')).toThrow(InvalidIdentifierError);
    expect(() => validateKeyspaceName('Upper')).toThrow(InvalidIdentifierError);
    expect(validateKeyspaceName('ks_1')).toBe('ks_1');
  });

  it('renders table options with the default compaction, naming the bad part otherwise', () => {
    expect(defaultCompactionFor([[5, 0, 6]])).toEqual({ class: 'UnifiedCompactionStrategy' });
    expect(
      defaultCompactionFor([
        [5, 0, 6],
        [4, 1, 9],
      ]),
    ).toEqual({ class: 'LeveledCompactionStrategy' });
    expect(defaultCompactionFor([[5, 0], []])).toEqual({ class: 'LeveledCompactionStrategy' });
    expect(defaultCompactionFor([])).toEqual({ class: 'LeveledCompactionStrategy' });
    expect(renderTableOptions(undefined, undefined, defaultCompactionFor([[5, 1]]))).toEqual([
      "compaction = {'class': 'UnifiedCompactionStrategy'}",
    ]);
    expect(renderTableOptions(undefined)).toEqual(["compaction = {'class': 'LeveledCompactionStrategy'}"]);
    expect(renderTableOptions({ compression: { class: 'LZ4Compressor', chunk_length_in_kb: 64 }, comment: 'x y' }, 60)).toEqual([
      "compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': '64'}",
      "comment = 'x y'",
      "compaction = {'class': 'LeveledCompactionStrategy'}",
      'default_time_to_live = 60',
    ]);
    // prepareTableOptions validates before any CQL and adds the connected cluster's default compaction only when none is named.
    const cluster = (...versions: number[][]) => ({ hosts: { values: () => versions.map((v) => ({ getCassandraVersion: () => v })) } });
    expect(prepareTableOptions({ comment: 'x' }, 60).render(cluster([5, 0, 6]))).toEqual([
      "compaction = {'class': 'UnifiedCompactionStrategy'}",
      "comment = 'x'",
      'default_time_to_live = 60',
    ]);
    expect(prepareTableOptions(undefined).render(cluster([5, 0], [4, 1]))).toEqual(["compaction = {'class': 'LeveledCompactionStrategy'}"]);
    expect(prepareTableOptions({ compaction: { class: 'SizeTieredCompactionStrategy' } }).render(cluster([5, 0]))).toEqual([
      "compaction = {'class': 'SizeTieredCompactionStrategy'}",
    ]);
    expect(() => prepareTableOptions({ gc_grace_seconds: -1 })).toThrow(/gc_grace_seconds/);
    expect(() => renderTableOptions({ compaction: { class: "L'}; DROP TABLE x" } })).toThrow(/compaction\.class/);
    expect(() => renderTableOptions({ default_time_to_live: -1 })).toThrow(/default_time_to_live/);
    expect(() => renderTableOptions({ ['BAD' as string]: 'x' })).toThrow(/BAD/);
    expect(renderReplication({ class: 'NetworkTopologyStrategy', datacenters: { datacenter1: 3 } })).toBe(
      "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}",
    );
    expect(() => renderReplication({ class: 'SimpleStrategy', replicationFactor: 0 })).toThrow(InvalidIdentifierError);
  });

  it('builds reversed-order reads for both layouts', () => {
    expect(versionedStatements({ keyspace: 'k', table: 't', scope: 'partitioned' }).after).toBe(
      'SELECT partition, writer, valid_from, value FROM k.t WHERE partition = ? AND key = ? AND valid_from > ? ORDER BY key DESC, valid_from ASC LIMIT 1',
    );
    expect(versionedStatements({ keyspace: 'k', table: 't', scope: 'global' }).floor).toBe(
      'SELECT writer, valid_from, value FROM k.t WHERE key = ? AND valid_from <= ? LIMIT ?',
    );
  });

  it("reads only the next version's valid_from for an as-of validTo", () => {
    expect(versionedStatements({ keyspace: 'k', table: 't', scope: 'global' }).nextFrom).toBe(
      'SELECT valid_from FROM k.t WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1',
    );
    expect(versionedStatements({ keyspace: 'k', table: 't', scope: 'partitioned', buckets: 4 }).in.nextFrom).toBe(
      'SELECT valid_from FROM k.t WHERE partition IN ? AND bucket = ? AND key = ? AND valid_from > ? ORDER BY key DESC, valid_from ASC LIMIT 1',
    );
  });

  it('bucketOf is stable and in range', () => {
    expect(bucketOf(Buffer.from('hello'), 16)).toBe(bucketOf(Buffer.from('hello'), 16));
    for (let i = 0; i < 100; i++) {
      const b = bucketOf(Buffer.from(`k${i}`), 7);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(b).toBeLessThan(7);
    }
  });

  it('mergeSorted merges sorted streams lazily and closes them on early exit', async () => {
    const out: number[] = [];
    for await (const x of mergeSorted([from([1, 4, 7]), from([2, 5]), from([]), from([0, 9])], (a, b) => a - b)) out.push(x);
    expect(out).toEqual([0, 1, 2, 4, 5, 7, 9]);
    let closed = 0;
    async function* tracked(xs: number[]): AsyncGenerator<number> {
      try {
        yield* xs;
      } finally {
        closed++;
      }
    }
    for await (const x of mergeSorted([tracked([1, 3]), tracked([2, 4])], (a, b) => a - b)) if (x === 2) break;
    expect(closed).toBe(2);
  });

  it('collectHistory computes validTo from neighbours and stops early', async () => {
    const v = (validFrom: number, value: string | null): RawVersion => ({ validFrom, value: value === null ? null : Buffer.from(value) });
    const rows = [v(40, 'c'), v(30, null), v(20, 'b'), v(10, 'a'), v(5, 'z')];
    const got = await collectHistory(from(rows), undefined, 15, Number.NEGATIVE_INFINITY);
    expect(got.map((e) => [e.validFrom, e.validTo, e.value.toString()])).toEqual([
      [40, undefined, 'c'],
      [20, 30, 'b'],
      [10, 20, 'a'],
    ]);
    const expired = await collectHistory(from(rows), 50, 0, 20);
    expect(expired.map((e) => e.validFrom)).toEqual([40, 20]);
    let pulled = 0;
    async function* counted(): AsyncGenerator<RawVersion> {
      for (const r of rows) {
        pulled++;
        yield r;
      }
    }
    const page = await collectHistory(counted(), undefined, 0, Number.NEGATIVE_INFINITY, 2);
    expect(page.map((e) => e.validFrom)).toEqual([40, 20]);
    expect(pulled).toBe(4); // 40, the tombstone at 30, 20, and the row that shows the page is full (not the 5th)
  });

  it('collectHistory counts the rows of one valid_from from several writers once: the first, as the as-of read answers', async () => {
    const v = (validFrom: number, value: string | null, writer: string): RawVersion => ({
      validFrom,
      value: value === null ? null : Buffer.from(value),
      writer,
    });
    // Clustered (valid_from DESC, writer ASC): a key that moved from partition t:1 to t:0 left two rows at 20 and 30.
    const rows = [v(40, 'd', 't:0'), v(30, null, 't:0'), v(30, 'c', 't:1'), v(20, 'b', 't:0'), v(20, 'b1', 't:1'), v(10, 'a', 't:1')];
    const got = await collectHistory(from(rows), undefined, 0, Number.NEGATIVE_INFINITY);
    expect(got.map((e) => [e.validFrom, e.validTo, e.value.toString()])).toEqual([
      [40, undefined, 'd'],
      [20, 30, 'b'],
      [10, 20, 'a'],
    ]);
  });

  it('asOfAnswer: validTo from the next version; below the horizon only a newest value answers, without validTo', () => {
    const v = (validFrom: number, value: string | null): RawVersion => ({ validFrom, value: value === null ? null : Buffer.from(value) });
    const inside = Number.NEGATIVE_INFINITY;
    expect(asOfAnswer({ floor: v(10, 'a'), next: v(20, null) }, 15, inside)).toEqual({ version: v(10, 'a'), validTo: 20 });
    expect(asOfAnswer({ floor: v(10, 'a'), next: null }, 15, inside)).toEqual({ version: v(10, 'a') });
    expect(asOfAnswer({ floor: v(10, null), next: v(20, 'b') }, 15, inside)).toBeNull();
    expect(asOfAnswer({ floor: null, next: v(20, 'b') }, 15, inside)).toBeNull();
    expect(asOfAnswer({ floor: v(10, 'a'), next: v(20, 'b') }, 15, 16)).toBeNull();
    expect(asOfAnswer({ floor: v(10, 'a'), next: null }, 15, 16)).toEqual({ version: v(10, 'a') });
    expect(asOfAnswer({ floor: v(10, 'a'), next: v(20, 'b') }, 16, 16)).toEqual({ version: v(10, 'a'), validTo: 20 });
  });

  /** Actions that record what the cleaner asked for. */
  const recorder = (log: string[], hex = false) => ({
    deleteBefore: async (k: Buffer, anchor: number) => void log.push(`${hex ? k.toString('hex') : k.toString()}<${anchor}`),
    cleanAtHorizon: async (k: Buffer) => void log.push(`read ${hex ? k.toString('hex') : k.toString()}`),
  });
  const options = { maxDirtyKeys: 10, concurrency: 1, maxQueued: 10 };

  it('RetentionCleaner deletes blind below a durable anchor once the horizon reaches it, and re-anchors on the next put', async () => {
    const log: string[] = [];
    const c = new RetentionCleaner(recorder(log), options);
    const a = c.track(Buffer.from('a'), 10);
    expect(a).toBeDefined();
    expect(c.track(Buffer.from('a'), 11)).toBeUndefined(); // already anchored
    c.trackWritten(Buffer.from('b'), 12);
    c.expireUpTo(20);
    await new Promise((r) => setImmediate(r));
    // a's anchor is still in flight: nothing is deleted, and b (behind it) waits too.
    expect(log).toEqual([]);
    c.anchorWritten(a!);
    c.expireUpTo(9);
    expect(log).toEqual([]);
    c.expireUpTo(12);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['a<10', 'b<12']);
    expect(c.size).toBe(0);
    // The next put anchors the key again.
    c.trackWritten(Buffer.from('a'), 30);
    expect(c.size).toBe(1);
    c.expireUpTo(29);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['a<10', 'b<12']);
    expect(c.reads).toBe(0);
  });

  it('RetentionCleaner never deletes below an anchor whose write failed; drain cleans every tracked key with a read', async () => {
    const log: string[] = [];
    const c = new RetentionCleaner(recorder(log), options);
    c.anchorFailed(c.track(Buffer.from('a'), 10)!);
    expect(c.size).toBe(0);
    c.anchorWritten(c.track(Buffer.from('a'), 15)!);
    c.trackWritten(Buffer.from('b'), 16);
    c.expireUpTo(14);
    await c.drain();
    expect(log.sort()).toEqual(['read a', 'read b']);
    expect(c.reads).toBe(2);
    expect(c.completed).toBe(2);
    expect(c.size).toBe(0);
  });

  it('RetentionCleaner keeps its FIFO within a constant factor of the tracked keys when anchors keep failing', () => {
    const c = new RetentionCleaner(recorder([]), options);
    c.trackWritten(Buffer.from('head'), 1); // an anchor above every horizon: the head never moves
    for (let i = 0; i < 100_000; i++) {
      const a = c.track(Buffer.from(`k${i % 7}`), 10 + i);
      if (a !== undefined) c.anchorFailed(a);
    }
    expect(c.size).toBe(1);
    expect(c.fifoSlots).toBeLessThanOrEqual(2 * c.size + 1024 + 1);
  });

  it('RetentionCleaner evicts the oldest key past its count bound and cleans it with a read', async () => {
    const log: string[] = [];
    const c = new RetentionCleaner(recorder(log), { ...options, maxDirtyKeys: 2 });
    c.trackWritten(Buffer.from('a'), 1);
    c.trackWritten(Buffer.from('b'), 2);
    c.trackWritten(Buffer.from('c'), 3); // evicts a
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['read a']);
    expect(c.size).toBe(2);
  });

  it('RetentionCleaner tracks two keys apart when they share a lookup hash (FNV-1a collision)', async () => {
    const fnv = (b: Buffer) => {
      let h = 0x811c9dc5;
      for (const x of b) h = Math.imul(h ^ x, 0x01000193);
      return h | 0;
    };
    // Two keys with the same 32-bit FNV-1a hash (found by a birthday search over `key-<n>`).
    const pair = [Buffer.from('key-901258'), Buffer.from('key-1540052')];
    expect(fnv(pair[0])).toBe(fnv(pair[1]));
    const [x, y] = pair;
    const log: string[] = [];
    const c = new RetentionCleaner(recorder(log, true), options);
    c.trackWritten(x, 1);
    c.trackWritten(y, 2);
    expect(c.track(x, 3)).toBeUndefined();
    expect(c.track(Buffer.from(y), 4)).toBeUndefined();
    expect(c.size).toBe(2);
    c.expireUpTo(5);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual([`${x.toString('hex')}<1`, `${y.toString('hex')}<2`]);
  });

  it('RetentionCleaner holds each key once and bounds the key bytes it holds (1,000 keys of 60 KB)', async () => {
    const cleaned = new Set<string>();
    const slow = async (k: Buffer) => {
      await new Promise((r) => setImmediate(r));
      cleaned.add(k.subarray(0, 8).toString());
    };
    const c = new RetentionCleaner(
      { deleteBefore: slow, cleanAtHorizon: slow },
      { maxDirtyKeys: 10_000, maxTrackedBytes: 1 << 20, concurrency: 4, maxQueued: 10_000 },
    );
    let peak = 0;
    let peakFifo = 0;
    for (let i = 0; i < 1000; i++) {
      const key = Buffer.alloc(60_000, 0xe9);
      key.write(String(i).padStart(8, '0'));
      c.trackWritten(key, i);
      c.trackWritten(key, i); // a second put to the same key adds nothing
      peak = Math.max(peak, c.trackedBytes);
      // Slots that keys left (evicted, cleaned) no longer hold their bytes.
      peakFifo = Math.max(peakFifo, c.fifoKeyBytes);
    }
    expect(peak).toBeLessThanOrEqual(1 << 20);
    expect(peakFifo).toBeLessThanOrEqual(1 << 19);
    expect(peak).toBeGreaterThan(8 * 60_000); // the budget is used, not bypassed
    await c.drain();
    expect(c.trackedBytes).toBe(0);
    expect(c.completed + c.dropped).toBe(1000);
    expect(cleaned.size).toBe(c.completed);
    expect(c.completed).toBeGreaterThan(0);
    // A cleaned key is the same bytes (latin1 round trip of non-ASCII bytes).
    const seen: Buffer[] = [];
    const d = new RetentionCleaner(
      { deleteBefore: async (k) => void seen.push(k), cleanAtHorizon: async (k) => void seen.push(k) },
      options,
    );
    d.trackWritten(Buffer.from([0, 0xff, 0x80, 0x7f]), 1);
    d.expireUpTo(1);
    await d.drain();
    expect(seen).toEqual([Buffer.from([0, 0xff, 0x80, 0x7f])]);
  });
});
