import { CassandraVersionedStore } from '../../../src/store/cassandra/cassandra-versioned-store';
import { CqlExecutor } from '../../../src/store/cassandra/cql-executor';
import { createWriteBatcher } from '../../../src/store/cassandra/batch-sender';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { WriteBatcher, WriteBatcherOptions } from '../../../src/store/cassandra/write-batcher';
import { StoreScope } from '../../../src/store/types';
import { bucketOf, DEFAULT_PARTITION_BUCKETS } from '../../../src/store/cassandra/key-bucket';
import { isolatedStore, useStoreKeyspace } from './support';

jest.setTimeout(180_000);

const ks = useStoreKeyspace('it_store_batch', { counting: true });
let counter = 0;

const batcherWith = (o: Partial<WriteBatcherOptions> = {}): WriteBatcher =>
  createWriteBatcher(new CqlExecutor(ks.client), ks.keyspace, { maxBytes: 4096, maxRows: 64, lingerMs: 2, maxConcurrent: 64, ...o });

async function open(scope: StoreScope, n: number, batcher?: WriteBatcher): Promise<CassandraVersionedStore<string, string>> {
  return openCassandraVersionedStore({
    client: ks.client,
    keyspace: ks.keyspace,
    storeName: `batch-${scope}`,
    ...isolatedStore(scope, n, 'b'),
    historyRetentionMs: 1_000_000,
    batcher,
  });
}

/** Every row of store instance n as `key|valid_from|value` (namespace stripped), sorted. */
async function rows(scope: StoreScope, n: number): Promise<string[]> {
  const rs = await ks.client.execute(`SELECT key, valid_from, value FROM ${ks.keyspace}.batch_${scope}`, [], {
    fetchSize: 100_000,
  });
  const prefix = `b${n}\u0000`;
  return rs.rows
    .filter((r) => (r.key as Buffer).toString('utf8').startsWith(prefix))
    .map(
      (r) =>
        `${(r.key as Buffer).toString('utf8').slice(prefix.length)}|${String(r.valid_from)}|${r.value === null ? 'null' : (r.value as Buffer).toString('utf8')}`,
    )
    .sort();
}

/** A changelog with hot keys, out-of-order versions, tombstones and rewrites of the same (key, timestamp). */
function changelog(): [string, string | null, number][] {
  const out: [string, string | null, number][] = [];
  for (let i = 0; i < 600; i++) {
    const key = `k${(i * 7) % 23}`;
    const ts = 10_000 + i * 3 - (i % 11 === 0 ? 40 : 0);
    out.push([key, i % 17 === 0 ? null : `v${i}`, ts]);
    // A second put with the same key and timestamp replaces the first (KIP-889), even inside one linger window.
    if (i % 13 === 0) out.push([key, `v${i}-again`, ts]);
  }
  return out;
}

/** Issues every write without awaiting the previous one (as the sink does), then waits for all. */
async function writeAll(s: CassandraVersionedStore<string, string>, seq: [string, string | null, number][]): Promise<string[]> {
  return Promise.all(seq.map(([k, v, t]) => s.write(k, v, t)));
}

describe.each(['partitioned', 'global'] as StoreScope[])('write batcher against Cassandra (%s)', (scope) => {
  it('leaves exactly the rows of unbatched writes, in far fewer requests, and replays idempotently', async () => {
    const seq = changelog();
    // The reference: the same writes without a batcher, each awaited before the next (one request per row).
    const plainN = ++counter;
    const plain = await open(scope, plainN);
    ks.tracker.reset();
    const plainOutcomes: string[] = [];
    for (const [k, v, t] of seq) plainOutcomes.push(await plain.write(k, v, t));
    const plainRequests = ks.tracker.counts().writes;
    const expected = await rows(scope, plainN);

    const batchedN = ++counter;
    const batched = await open(scope, batchedN, batcherWith());
    ks.tracker.reset();
    expect(await writeAll(batched, seq)).toEqual(plainOutcomes);
    const batchedRequests = ks.tracker.counts().writes;
    expect(await rows(scope, batchedN)).toEqual(expected);
    expect(expected.filter((r) => r.endsWith('-again')).length).toBeGreaterThan(0);
    expect(plainRequests).toBe(seq.length);
    // Batches are cut at 64 rows, and early when a row is rewritten inside the linger window.
    expect(batchedRequests).toBeLessThanOrEqual(seq.length / 5);
    for (const key of ['k0', 'k5', 'k22']) expect(await batched.history(key)).toEqual(await plain.history(key));

    // A restarted writer replays the same records through a new batcher: the rows are unchanged.
    const replay = await open(scope, batchedN, batcherWith({ maxRows: 7 }));
    await writeAll(replay, seq);
    expect(await rows(scope, batchedN)).toEqual(expected);
  });

  it('splits a batch Cassandra refuses (over batch_size_fail_threshold) so that every row, the big one too, is written', async () => {
    const n = ++counter;
    // Bounds far above Cassandra's 50 KiB fail threshold, so the batcher builds a batch Cassandra rejects.
    const s = await open(scope, n, batcherWith({ maxBytes: 1 << 20 }));
    const big = 'x'.repeat(30_000);
    ks.tracker.reset();
    const outcomes = await writeAll(s, [
      ['a', 'small-a', 1],
      ['b', big, 2],
      ['c', big, 3],
      ['d', 'small-d', 4],
    ]);
    expect(outcomes).toEqual(['written', 'written', 'written', 'written']);
    // Cassandra checks the size of multi-partition batches only: one refused batch of 4, then its halves, and their
    // halves while a half still holds both big rows (the batch is sorted by partition, so which rows pair up depends
    // on their hashes). A partitioned table spreads keys over (partition, bucket) Cassandra partitions too.
    const buckets = new Set(['a', 'b', 'c', 'd'].map((k) => bucketOf(Buffer.from(`b${n}\u0000${k}`), DEFAULT_PARTITION_BUCKETS)));
    const onePartition = scope === 'partitioned' && buckets.size === 1;
    const sent = ks.tracker.queries;
    if (onePartition) expect(sent).toEqual(['BATCH(4)']);
    else {
      // The tracker logs requests as they complete, so a refused half's single rows may come before the other half.
      expect(sent[0]).toBe('BATCH(4)');
      expect(sent.slice(1).filter((q) => q === 'BATCH(2)')).toHaveLength(2);
      // At most one half is refused again (the one holding both big rows): its two rows then go alone.
      const singles = sent.slice(1).filter((q) => q !== 'BATCH(2)');
      expect(singles.length === 0 || (singles.length === 2 && singles.every((q) => q.startsWith('INSERT')))).toBe(true);
    }
    expect((await rows(scope, n)).map((r) => r.split('|').slice(0, 2).join('|'))).toEqual(['a|1', 'b|2', 'c|3', 'd|4']);
  });
});
