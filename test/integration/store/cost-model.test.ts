import { CassandraVersionedStore } from '../../../src/store/cassandra/cassandra-versioned-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { PUT_RETURN_CODE_NOT_PUT, StoreScope } from '../../../src/store/types';
import { CqlExecutor } from '../../../src/store/cassandra/cql-executor';
import { createWriteBatcher } from '../../../src/store/cassandra/batch-sender';
import { WriteBatcher } from '../../../src/store/cassandra/write-batcher';
import { CASSANDRA_BATCH_WARN_BYTES } from '../../../src/store/cassandra/batch-data-size';
import { createUnbucketedTable, createWriterCellTable, isolatedStore, useStoreKeyspace } from './support';

jest.setTimeout(180_000);

const ks = useStoreKeyspace('it_store_cost', { counting: true });
let counter = 0;

/** A table layout under test: its name (the table is `cost_<name>`) and scope. */
interface Layout {
  name: string;
  scope: StoreScope;
}

/**
 * Bucketed partitioned tables (the default), partitioned tables from before buckets, global tables, and global tables
 * from before the writer clustered (a cell of its own: the batcher's size estimate differs).
 */
const layouts: Layout[] = [
  { name: 'partitioned', scope: 'partitioned' },
  { name: 'unbucketed', scope: 'partitioned' },
  { name: 'global', scope: 'global' },
  { name: 'writercell', scope: 'global' },
];

beforeAll(async () => {
  await createUnbucketedTable(ks.client, ks.keyspace, 'cost_unbucketed', 'versioned');
  await createWriterCellTable(ks.client, ks.keyspace, 'cost_writercell');
});

async function open(
  layout: Layout,
  historyRetentionMs: number,
  extra: { n?: number; batcher?: WriteBatcher } = {},
): Promise<CassandraVersionedStore<string, string>> {
  const { scope } = layout;
  const n = extra.n ?? ++counter;
  return openCassandraVersionedStore({
    client: ks.client,
    keyspace: ks.keyspace,
    storeName: `cost-${layout.name}`,
    ...isolatedStore(scope, n, 'c'),
    historyRetentionMs,
    batcher: extra.batcher,
  });
}

/** Cassandra's batch size warnings, as the driver logs them from responses, until stopped. */
function batchSizeWarnings(): { seen: string[]; stop: () => void } {
  const seen: string[] = [];
  const listener = (level: string, _cls: string, message: string) => {
    if (level === 'warning' && /Batch for .* is of size/.test(message)) seen.push(message);
  };
  ks.client.on('log', listener);
  return { seen, stop: () => ks.client.off('log', listener) };
}

/** A write batcher with the worker's default bounds: 5,120 bytes as Cassandra counts them, 64 rows, 2 ms linger. */
function workerBatcher(): WriteBatcher {
  return createWriteBatcher(new CqlExecutor(ks.client), ks.keyspace, {
    maxBytes: CASSANDRA_BATCH_WARN_BYTES,
    maxRows: 64,
    lingerMs: 2,
    maxConcurrent: 64,
  });
}

async function measure<T>(fn: () => Promise<T>): Promise<{ result: T; reads: number; writes: number }> {
  ks.tracker.reset();
  const result = await fn();
  const { reads, writes } = ks.tracker.counts();
  return { result, reads, writes };
}

/** The rows of store instance n (its keys are namespaced `c<n>`), as sorted strings. */
async function rows(table: string, n: number): Promise<string[]> {
  const rs = await ks.client.execute(`SELECT key, valid_from, value FROM ${ks.keyspace}.${table}`, [], { fetchSize: 100_000 });
  return rs.rows
    .filter((r) => (r.key as Buffer).toString('utf8').startsWith(`c${n}\u0000`))
    .map(
      (r) =>
        `${(r.key as Buffer).toString('hex')}|${String(r.valid_from)}|${r.value === null ? 'null' : (r.value as Buffer).toString('hex')}`,
    )
    .sort();
}

const report: Record<string, unknown> = {};
afterAll(() => {
  process.stderr.write(`cost model (requests sent to Cassandra):\n${JSON.stringify(report, null, 2)}\n`);
});

describe.each(layouts)('cost model ($name)', (layout) => {
  const label = layout.name;
  it("the sink's write path costs one write and no read, in order or not", async () => {
    const s = await open(layout, 100);
    expect(await measure(() => s.write('k', 'a', 1000))).toEqual({ result: 'written', reads: 0, writes: 1 });
    expect(await measure(() => s.write('k', 'b', 950))).toEqual({ result: 'written', reads: 0, writes: 1 });
    expect(await measure(() => s.write('k', 'late', 899))).toEqual({ result: 'expired', reads: 0, writes: 0 });
    expect((await s.get('k', 975))?.value).toBe('b');
    expect((await s.get('k'))?.value).toBe('a');
  });

  it('with the write batcher, concurrent sink writes cost one request per batch, bounded by rows and by Cassandra’s batch size', async () => {
    // The worker's default bounds: 5,120 bytes as Cassandra counts them and 64 rows per UNLOGGED batch, 2 ms linger.
    const batcher = workerBatcher();
    const s = await open(layout, 1_000_000, { batcher });
    const warnings = batchSizeWarnings();
    try {
      const small = await measure(() => Promise.all(Array.from({ length: 128 }, (_, i) => s.write(`k${i % 50}`, `v${i}`, 1000 + i))));
      // 128 small rows: Cassandra counts ≈ 85–140 bytes each (by layout), so the byte bound cuts them before the row bound.
      const sizes = ks.tracker.queries.map((q) => Number(/^BATCH\((\d+)\)$/.exec(q)?.[1]));
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(128);
      expect(small.reads).toBe(0);
      expect(small.writes).toBe(sizes.length);
      expect(sizes.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...sizes)).toBeLessThan(64);
      const value = 'x'.repeat(1000);
      const large = await measure(() => Promise.all(Array.from({ length: 12 }, (_, i) => s.write(`big${i}`, value, 5000 + i))));
      // 12 rows of ≈ 1,130 bytes as Cassandra counts them: 4 per 5,120-byte batch.
      expect({ reads: large.reads, writes: large.writes }).toEqual({ reads: 0, writes: 3 });
      // Cassandra warned about no batch (it checks batches spanning several partitions; the driver logs its warnings).
      expect(warnings.seen).toEqual([]);
      expect((await s.get('k49'))?.value).toBe('v99');
      expect((await s.get('big11'))?.value).toBe(value);
      (report as Record<string, unknown>)[`${label}-batched`] = {
        smallRowsPerRequest: 128 / small.writes,
        kilobyteRowsPerRequest: 12 / large.writes,
      };
    } finally {
      warnings.stop();
    }
  });

  it('puts, gets and deletes cost the advertised number of requests', async () => {
    const s = await open(layout, 100);
    const inOrder = await measure(() => s.put('k', 'v1', 1000));
    expect(inOrder).toEqual({ result: -1, reads: 0, writes: 1 });
    const inOrderEqual = await measure(() => s.put('k', 'v1b', 1000));
    expect(inOrderEqual).toEqual({ result: -1, reads: 0, writes: 1 });
    const outOfOrder = await measure(() => s.put('k', 'v0', 950));
    expect(outOfOrder).toEqual({ result: 1000, reads: 1, writes: 1 });
    const outOfOrderLatest = await measure(() => s.put('other', 'o', 960));
    expect(outOfOrderLatest).toEqual({ result: -1, reads: 1, writes: 1 });
    const expired = await measure(() => s.put('k', 'old', 899));
    expect(expired).toEqual({ result: PUT_RETURN_CODE_NOT_PUT, reads: 0, writes: 0 });
    const get = await measure(() => s.get('k'));
    expect(get).toEqual({ result: { value: 'v1b', timestamp: 1000 }, reads: 1, writes: 0 });
    const asOf = await measure(() => s.get('k', 975));
    // The version as of 975 and the next one (its validTo), read in parallel.
    expect(asOf).toEqual({ result: { value: 'v0', timestamp: 950, validTo: 1000 }, reads: 2, writes: 0 });
    const belowHorizon = await measure(() => s.get('k', 500));
    expect(belowHorizon).toEqual({ result: null, reads: 1, writes: 0 });
    const del = await measure(() => s.delete('k', 990));
    expect(del).toEqual({ result: { value: 'v0', timestamp: 950, validTo: 1000 }, reads: 2, writes: 1 });
    const history = await measure(() => s.history('k'));
    expect(history).toEqual({
      result: [
        { value: 'v1b', timestamp: 1000 },
        { value: 'v0', timestamp: 950, validTo: 990 },
      ],
      reads: 1,
      writes: 0,
    });
    const historyBounded = await measure(() => s.history('k', { fromTime: 960, toTime: 995 }));
    expect(historyBounded).toEqual({ result: [{ value: 'v0', timestamp: 950, validTo: 990 }], reads: 2, writes: 0 });
    // Two dirty keys, nothing older than the horizon to delete: one clean-up read each, one stream-time write.
    const flush = await measure(() => s.flush());
    expect({ reads: flush.reads, writes: flush.writes }).toEqual({ reads: 2, writes: 1 });
    const flushAgain = await measure(() => s.flush());
    expect(flushAgain.writes + flushAgain.reads).toBe(0);
    Object.assign(report, {
      [label]: {
        putInOrder: inOrder,
        putOutOfOrder: outOfOrder,
        putExpired: expired,
        get,
        getAsOf: asOf,
        getBelowHorizon: belowHorizon,
        delete: del,
        history: { reads: history.reads, writes: history.writes },
        historyWithToTime: { reads: historyBounded.reads, writes: historyBounded.writes },
        flushWithTwoDirtyKeys: { reads: flush.reads, writes: flush.writes },
        flushUnchanged: { reads: flushAgain.reads, writes: flushAgain.writes },
      },
    });
    await s.close();
  });

  it('replaying the same put sequence leaves identical rows', async () => {
    const n = ++counter;
    const table = `cost_${layout.name}`;
    const seq: [string, string | null, number][] = [
      ['a', 'a1', 10],
      ['b', 'b1', 12],
      ['a', 'a0', 5],
      ['a', null, 20],
      ['b', 'b2', 15],
      ['a', 'a3', 30],
      ['c', 'c1', 25],
      ['a', 'a2', 25],
      ['b', null, 13],
      ['c', 'c1b', 25],
      ['a', 'late', 1],
    ];
    const run = async (s: CassandraVersionedStore<string, string>): Promise<number[]> => {
      const out: number[] = [];
      for (const [k, v, t] of seq) out.push(await s.put(k, v, t));
      return out;
    };
    const first = await open(layout, 10_000, { n });
    const firstResults = await run(first);
    const before = await rows(table, n);
    // Crash before flush: a new instance starts from the persisted (initial) stream time and replays.
    const replay = await open(layout, 10_000, { n });
    expect(await run(replay)).toEqual(firstResults);
    expect(await rows(table, n)).toEqual(before);
    // Replay again after a flush (stream time persisted at the end of the sequence).
    await replay.flush();
    const afterFlush = await open(layout, 10_000, { n });
    await run(afterFlush);
    expect(await rows(table, n)).toEqual(before);
    expect(before.length).toBe(10);
  });

  it("the sink's path keeps O(2 × retention) rows with blind deletes and no read (flush at each commit)", async () => {
    const n = ++counter;
    const s = await open(layout, 20, { n });
    ks.tracker.reset();
    let most = 0;
    let probes = 0;
    for (let t = 0; t < 1000; t++) {
      await s.write('hot', `v${t}`, t);
      await s.write(`cold${t % 3}`, `v${t}`, t);
      if (t % 10 === 9) {
        await s.flush(t);
        await new Promise((r) => setTimeout(r, 5)); // the blind deletes run in the background
        if (t % 100 === 99) {
          most = Math.max(most, (await rows(`cost_${layout.name}`, n)).length);
          probes++;
        }
      }
    }
    const counts = ks.tracker.counts();
    const reads = counts.reads - probes;
    const writes = counts.writes;
    // Versions are only ever deleted below a durable version at or below the persisted horizon: no read at all.
    expect(reads).toBe(0);
    // 2,000 version writes, ≤ 100 stream-time writes, and about one delete per key per 2 × retention.
    expect(writes).toBeGreaterThan(2000 + 4 * 20);
    expect(writes).toBeLessThan(2000 + 100 + 4 * 60);
    // 4 keys, each with at most about 2 × retention of versions (the hot key 40 + a flush interval; the cold ones 14).
    expect(most).toBeLessThanOrEqual(2 * (40 + 10) + 2 * (14 + 4));
    // Every answer inside retention is still there, with its validTo.
    expect(await s.get('hot', 985)).toEqual({ value: 'v985', timestamp: 985, validTo: 986 });
    expect(await s.get('cold1', 985)).toEqual({ value: 'v985', timestamp: 985, validTo: 988 });
    expect((await s.history('hot')).length).toBe(21);
    expect(s.cleanupStats().reads).toBe(0);
    (report as Record<string, unknown>)[`${label}-sink-1000-puts`] = { rowsAtMost: most, reads, writes, cleanups: s.cleanupStats() };
    await s.close();
  });

  it('2,000 in-order puts of one key keep O(retention) rows after flush', async () => {
    const n = ++counter;
    const s = await open(layout, 20, { n });
    ks.tracker.reset();
    for (let t = 0; t < 2000; t++) await s.put('hot', `v${t}`, t);
    await s.flush();
    const { reads, writes } = ks.tracker.counts();
    const left = await rows(`cost_${layout.name}`, n);
    expect(left.length).toBeLessThanOrEqual(21 + 64);
    expect((await s.history('hot')).length).toBe(21);
    expect(await s.get('hot', 1979)).toEqual({ value: 'v1979', timestamp: 1979, validTo: 1980 });
    (report as Record<string, unknown>)[`${label}-2000-puts`] = { rowsLeft: left.length, reads, writes, cleanups: s.cleanupStats() };
    await s.close();
  });
});

describe('cost model (edge layout)', () => {
  const edges: Layout = { name: 'edges', scope: 'global' };
  const openEdges = (n: number, retention: number, batcher?: WriteBatcher) =>
    openCassandraVersionedStore<string, string>({
      client: ks.client,
      keyspace: ks.keyspace,
      storeName: 'cost-edges',
      ...isolatedStore(edges.scope, n, 'c'),
      historyRetentionMs: retention,
      layout: 'edges',
      batcher,
    });

  it('a key seen first costs one read, later puts none; a late put writes a marker; an as-of get with validTo is one read (two past a stale row)', async () => {
    const n = ++counter;
    const s = await openEdges(n, 1_000);
    expect(await measure(() => s.write('k', 'a', 1000))).toEqual({ result: 'written', reads: 1, writes: 1 });
    expect(await measure(() => s.write('k', 'b', 1100))).toEqual({ result: 'written', reads: 0, writes: 1 });
    // Late, between two known versions: its row under 1000, and a marker under it for 1100.
    expect(await measure(() => s.write('k', 'c', 1050))).toEqual({ result: 'written', reads: 0, writes: 2 });
    expect(await measure(() => s.get('k', 1075))).toEqual({ result: { value: 'c', timestamp: 1050, validTo: 1100 }, reads: 1, writes: 0 });
    // The row (1000, 1100) the late put made stale lies between 1000's successor and its value row: a second read.
    expect(await measure(() => s.get('k', 1020))).toEqual({ result: { value: 'a', timestamp: 1000, validTo: 1050 }, reads: 2, writes: 0 });
    // The newest version's marker (1050, 1100) comes first, its value row third: a second read.
    expect(await measure(() => s.get('k'))).toEqual({ result: { value: 'b', timestamp: 1100 }, reads: 2, writes: 0 });
    // put() returns the validTo it planned, without a read of its own.
    expect(await measure(() => s.put('k', 'c2', 1050))).toEqual({ result: 1100, reads: 0, writes: 1 });
    await s.flush();
    // A new writer (a restart) knows no key: its first put of each key reads once.
    const again = await openEdges(n, 1_000);
    expect(await measure(() => again.write('k', 'd', 1200))).toEqual({ result: 'written', reads: 1, writes: 1 });
    expect(await measure(() => again.write('k', 'e', 1300))).toEqual({ result: 'written', reads: 0, writes: 1 });
    expect(await again.get('k', 1060)).toEqual({ value: 'c2', timestamp: 1050, validTo: 1100 });
    // With a version after it and no late one in between, an as-of get is one read again.
    expect(await measure(() => again.get('k', 1250))).toEqual({
      result: { value: 'd', timestamp: 1200, validTo: 1300 },
      reads: 1,
      writes: 0,
    });
    expect(await measure(() => again.get('k'))).toEqual({ result: { value: 'e', timestamp: 1300 }, reads: 1, writes: 0 });
    await again.flush();
    // A first put older than the key's newest rows: the grouped read of keys seen first cannot settle it, its slice does.
    const third = await openEdges(n, 1_000);
    expect(await measure(() => third.write('k', 'f', 1060))).toEqual({ result: 'written', reads: 2, writes: 2 });
    expect(await third.get('k', 1070)).toEqual({ value: 'f', timestamp: 1060, validTo: 1100 });
    expect(await third.get('k', 1250)).toEqual({ value: 'd', timestamp: 1200, validTo: 1300 });
    await Promise.all([s.close(), again.close(), third.close()]);
  });

  it('a floor under several late versions: its value row lies past the second read, which pages on (three reads)', async () => {
    const s = await openEdges(++counter, 1_000_000);
    await s.write('k', 'a', 1000);
    await s.write('k', 'b', 2000);
    // Each late put lands just above 1000: its row under 1000, a marker under it for the version after it.
    for (const t of [1900, 1800, 1700, 1600, 1500]) await s.write('k', `late${t}`, t);
    // Below 2000: five markers, then 1000's rows (1500, 1600, …, 2000): 2000's value row is the 10th.
    expect(await measure(() => s.get('k'))).toEqual({ result: { value: 'b', timestamp: 2000 }, reads: 3, writes: 0 });
    expect(await measure(() => s.get('k', 1950))).toEqual({
      result: { value: 'late1900', timestamp: 1900, validTo: 2000 },
      reads: 3,
      writes: 0,
    });
    // One late version under the floor: its value row is the third of the second read.
    expect(await measure(() => s.get('k', 1550))).toEqual({
      result: { value: 'late1500', timestamp: 1500, validTo: 1600 },
      reads: 1,
      writes: 0,
    });
    await s.close();
  });

  it('with the write batcher, a late put and its marker share one batch; Cassandra warns about no batch', async () => {
    const batcher = workerBatcher();
    const s = await openEdges(++counter, 1_000_000, batcher);
    const warnings = batchSizeWarnings();
    try {
      // Keys seen first together are read together: one read for 20 keys.
      const first = await measure(() => Promise.all(Array.from({ length: 20 }, (_, i) => s.write(`k${i}`, 'x'.repeat(1000), 1000))));
      expect(first.reads).toBe(1);
      const late = await measure(() => Promise.all([s.write('k1', 'y', 2000), s.write('k1', 'late', 1500)]));
      expect(late.reads).toBe(0);
      expect(late.writes).toBe(1);
      expect(warnings.seen).toEqual([]);
      expect(await s.get('k1', 1700)).toEqual({ value: 'late', timestamp: 1500, validTo: 2000 });
    } finally {
      warnings.stop();
      await s.close();
    }
  });

  it('expiry keeps O(2 × retention) rows at one read and at most one delete per key per clean-up', async () => {
    const n = ++counter;
    const s = await openEdges(n, 20);
    ks.tracker.reset();
    for (let t = 0; t < 1000; t++) {
      await s.write('hot', `v${t}`, t);
      if (t % 10 === 9) {
        await s.flush(t);
        await new Promise((r) => setTimeout(r, 5)); // clean-ups run in the background
      }
    }
    await s.flush();
    const { reads, writes } = ks.tracker.counts();
    const left = await rows('cost_edges', n);
    expect(left.length).toBeLessThanOrEqual(2 * (20 + 10) + 2);
    expect(reads).toBeLessThanOrEqual(1 + s.cleanupStats().completed);
    expect(writes).toBeLessThanOrEqual(1000 + 100 + s.cleanupStats().completed);
    expect((await s.history('hot')).length).toBe(21);
    expect(await s.get('hot', 985)).toEqual({ value: 'v985', timestamp: 985, validTo: 986 });
    (report as Record<string, unknown>)['edges-sink-1000-puts'] = { rowsLeft: left.length, reads, writes, cleanups: s.cleanupStats() };
    await s.close();
  });
});
