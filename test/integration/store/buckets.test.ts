import { Client } from 'cassandra-driver';
import { bucketOf, partitionBucketRoutingKey } from '../../../src/store/cassandra/key-bucket';
import { openCassandraKeyValueStore } from '../../../src/store/cassandra/open-kv-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { partitionKeyOf, useStoreKeyspace } from './support';

jest.setTimeout(120_000);

const ks = useStoreKeyspace('it_store_buckets');

/** The token the driver computes for a routing key (what token-aware routing and the batcher's replica groups use). */
function driverToken(client: Client, routingKey: Buffer): string {
  const tokenizer = (client.metadata as unknown as { tokenizer: { hash(b: Buffer): { getValue(): { toString(): string } } } }).tokenizer;
  return tokenizer.hash(routingKey).getValue().toString();
}

describe('key-hash buckets of partitioned tables', () => {
  it('spreads one source partition over its buckets by the key hash, and routes each row by the token of (partition, bucket)', async () => {
    const s = await openCassandraVersionedStore<string, string>({
      client: ks.client,
      keyspace: ks.keyspace,
      storeName: 'spread',
      scope: 'partitioned',
      partition: 3,
      buckets: 8,
      historyRetentionMs: 1_000_000,
    });
    const keys = Array.from({ length: 400 }, (_, i) => `key-${i}`);
    for (const k of keys) await s.write(k, 'v', 1000);
    await s.flush();
    expect(await partitionKeyOf(ks.client, ks.keyspace, 'spread')).toEqual(['partition', 'bucket']);
    const rs = await ks.client.execute(`SELECT partition, bucket, key, token(partition, bucket) AS t FROM ${ks.keyspace}.spread`, [], {
      fetchSize: 10_000,
    });
    expect(rs.rowLength).toBe(400);
    const perBucket = new Map<number, number>();
    for (const r of rs.rows) {
      const key = r.get('key') as Buffer;
      const bucket = Number(r.get('bucket'));
      expect(Number(r.get('partition'))).toBe(3);
      expect(bucket).toBe(bucketOf(key, 8));
      // Cassandra's token of the row's partition key is the driver's token of the routing key the store sends.
      expect(driverToken(ks.client, partitionBucketRoutingKey(3, bucket))).toBe(String(r.get('t')));
      perBucket.set(bucket, (perBucket.get(bucket) ?? 0) + 1);
    }
    // Every bucket is used, and none holds more than twice its share (FNV-1a spreads these keys evenly).
    expect([...perBucket.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const n of perBucket.values()) expect(n).toBeLessThan(100);
    // A point read finds every key in its bucket.
    for (const k of ['key-0', 'key-199', 'key-399']) expect((await s.get(k))?.value).toBe('v');
    await s.close();
  });

  it('a kv store merges the ordered streams of every bucket of a partition into one key-ordered scan', async () => {
    const open = (partition: number) =>
      openCassandraKeyValueStore<string, string>({
        client: ks.client,
        keyspace: ks.keyspace,
        storeName: 'kv-spread',
        scope: 'partitioned',
        partition,
        buckets: 5,
        fetchSize: 7,
      });
    const p0 = await open(0);
    const p1 = await open(1);
    const keys = Array.from({ length: 120 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    await p0.putAll(keys.map((k) => ({ key: k, value: `p0-${k}` })));
    await p1.putAll(keys.slice(0, 10).map((k) => ({ key: k, value: `p1-${k}` })));
    const seen: string[] = [];
    for await (const e of p0.range('k010', 'k099')) seen.push(`${e.key}=${e.value}`);
    expect(seen).toEqual(keys.slice(10, 100).map((k) => `${k}=p0-${k}`));
    const reversed: string[] = [];
    for await (const e of p0.reverseAll()) reversed.push(e.key);
    expect(reversed).toEqual([...keys].reverse());
    const rs = await ks.client.execute(`SELECT DISTINCT partition, bucket FROM ${ks.keyspace}.kv_spread`);
    expect(rs.rowLength).toBe(10); // 2 partitions × 5 buckets
  });
});
