import { bucketOf, int32RoutingKey, partitionBucketRoutingKey } from '../../../src/store/cassandra/key-bucket';
import { CqlExecutor } from '../../../src/store/cassandra/cql-executor';
import { KvTableReader } from '../../../src/store/cassandra/kv-table-reader';
import { kvTableDdl, TableRef, versionedStatements, versionedTableDdl } from '../../../src/store/cassandra/layout';
import { VersionedTableReader } from '../../../src/store/cassandra/versioned-table-reader';
import { stringSerde } from '../../../src/store/serde';

const bucketed: TableRef = { keyspace: 'k', table: 't', scope: 'partitioned', buckets: 4 };
const unbucketed: TableRef = { keyspace: 'k', table: 't', scope: 'partitioned' };

describe('key-hash buckets (no database)', () => {
  it('bucketOf is FNV-1a 32 of the key bytes modulo buckets: pinned, since a table keeps its rows where it wrote them', () => {
    // Published FNV-1a 32-bit test vectors.
    expect(bucketOf(Buffer.alloc(0), 2 ** 32)).toBe(0x811c9dc5);
    expect(bucketOf(Buffer.from('a'), 2 ** 32)).toBe(0xe40c292c);
    expect(bucketOf(Buffer.from('foobar'), 2 ** 32)).toBe(0xbf9cf968);
    expect(bucketOf(Buffer.from('foobar'), 64)).toBe(0xbf9cf968 % 64);
    expect(bucketOf(Buffer.from('foobar'), 16)).toBe(0xbf9cf968 % 16);
  });

  it('spreads realistic keys evenly over the buckets of each partition', () => {
    const counts = new Map<string, number>();
    for (let k = 0; k < 60_000; k++) {
      const where = `${k % 6}/${bucketOf(Buffer.from(`customer-${String(k).padStart(8, '0')}`), 64)}`;
      counts.set(where, (counts.get(where) ?? 0) + 1);
    }
    expect(counts.size).toBe(6 * 64);
    const mean = 60_000 / (6 * 64);
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(mean * 0.6);
      expect(n).toBeLessThan(mean * 1.4);
    }
  });

  it('routing keys are the serialised Cassandra partition key: an int, or the composite (partition, bucket)', () => {
    expect(int32RoutingKey(7).toString('hex')).toBe('00000007');
    // Composite: per component a 2-byte length, the value and an end-of-component 0 byte.
    expect(partitionBucketRoutingKey(7, 300).toString('hex')).toBe('0004' + '00000007' + '00' + '0004' + '0000012c' + '00');
  });

  it('bucketed tables put the bucket in the partition key, every statement and every row locator', () => {
    expect(versionedTableDdl(bucketed).columns).toBe(
      'partition int, bucket int, key blob, valid_from bigint, value blob, writer text, PRIMARY KEY ((partition, bucket), key, valid_from, writer)',
    );
    expect(versionedTableDdl(unbucketed).columns).toContain('PRIMARY KEY ((partition), key, valid_from, writer)');
    expect(kvTableDdl(bucketed).columns).toBe('partition int, bucket int, key blob, value blob, PRIMARY KEY ((partition, bucket), key)');
    expect(kvTableDdl(unbucketed).columns).toBe('partition int, key blob, value blob, PRIMARY KEY ((partition), key)');
    expect(kvTableDdl({ ...bucketed, scope: 'global' }).columns).toBe('bucket int, key blob, value blob, PRIMARY KEY ((bucket), key)');
    const s = versionedStatements(bucketed);
    expect(s.insert).toBe('INSERT INTO k.t (partition, bucket, key, valid_from, value, writer) VALUES (?, ?, ?, ?, ?, ?)');
    expect(s.floor).toBe(
      'SELECT partition, writer, valid_from, value FROM k.t WHERE partition = ? AND bucket = ? AND key = ? AND valid_from <= ? LIMIT ?',
    );
    expect(s.in.latest).toBe(
      'SELECT partition, writer, valid_from, value FROM k.t WHERE partition IN ? AND bucket = ? AND key = ? LIMIT 1',
    );
    expect(s.deleteBefore).toBe('DELETE FROM k.t WHERE partition = ? AND bucket = ? AND key = ? AND valid_from < ?');
    expect(versionedStatements(unbucketed).in.latest).toBe(
      'SELECT partition, writer, valid_from, value FROM k.t WHERE partition IN ? AND key = ? LIMIT 1',
    );
  });

  it("a versioned reader locates a key's rows in its bucket (bucketed) or its partition (unbucketed)", () => {
    const key = Buffer.from('foobar');
    const exec = {} as CqlExecutor;
    expect(new VersionedTableReader(exec, bucketed).rowKey(key, 2)).toEqual([2, 0xbf9cf968 % 4, key]);
    expect(new VersionedTableReader(exec, unbucketed).rowKey(key, 2)).toEqual([2, key]);
    expect(new VersionedTableReader(exec, { ...bucketed, scope: 'global' }).rowKey(key, undefined)).toEqual([key]);
  });
});

/** A fake executor over an in-memory bucketed kv table: serves prepared reads by their bind values, paged. */
function fakeTable(rows: { partition: number; key: string; value: string }[], buckets: number) {
  const queries: { query: string; params: unknown[] }[] = [];
  const stored = rows.map((r) => ({ ...r, bucket: bucketOf(Buffer.from(r.key), buckets), bytes: Buffer.from(r.key) }));
  const exec = {
    async read(query: string, params: unknown[], _what: string, extra: { fetchSize?: number; pageState?: string } = {}) {
      queries.push({ query, params });
      const [p, b, ...bounds] = params as [number, number, ...Buffer[]];
      let hits = stored.filter((r) => r.partition === p && r.bucket === b).sort((x, y) => Buffer.compare(x.bytes, y.bytes));
      const lower = query.includes('key >= ?') ? bounds[0] : undefined;
      const upper = query.includes('key <= ?') ? bounds[lower === undefined ? 0 : 1] : undefined;
      if (lower !== undefined) hits = hits.filter((r) => Buffer.compare(r.bytes, lower) >= 0);
      if (upper !== undefined) hits = hits.filter((r) => Buffer.compare(r.bytes, upper) <= 0);
      if (query.includes('ORDER BY key DESC')) hits.reverse();
      if (query.startsWith('SELECT value')) hits = hits.filter((r) => r.bytes.equals(bounds[0]));
      const from = Number(extra.pageState ?? 0);
      const size = extra.fetchSize ?? hits.length;
      const page = hits.slice(from, from + size).map((r) => ({ key: r.bytes, value: Buffer.from(r.value) }));
      return { rows: page, pageState: from + size < hits.length ? String(from + size) : undefined, first: () => page[0] ?? null };
    },
  };
  return { exec: exec as unknown as CqlExecutor, queries };
}

describe('bucketed kv reads (no database)', () => {
  const keys = Array.from({ length: 40 }, (_, i) => `k${String(i).padStart(2, '0')}`);
  const rows = keys.map((key, i) => ({ partition: i % 2, key, value: `v${i}` }));
  const reader = (exec: CqlExecutor) =>
    new KvTableReader<string, string>(
      exec,
      { ...bucketed, buckets: 4 },
      { keySerde: stringSerde, valueSerde: stringSerde, fetchSize: 3, partitions: [0, 1] },
    );

  it('merges the paged, ordered streams of every (partition, bucket) into one key-ordered scan', async () => {
    const { exec, queries } = fakeTable(rows, 4);
    const seen: string[] = [];
    for await (const e of reader(exec).all()) seen.push(e.key);
    expect(seen).toEqual(keys);
    // 2 partitions × 4 buckets, each read with `partition = ? AND bucket = ?`, page by page.
    const located = new Set(queries.map((q) => `${String(q.params[0])}/${String(q.params[1])}`));
    expect(located.size).toBe(8);
    expect(queries.every((q) => q.query.includes('WHERE partition = ? AND bucket = ?'))).toBe(true);
    expect(queries.length).toBeGreaterThan(8); // pages of 3 rows
  });

  it('reverse and bounded scans, and a scan of one source partition, stay in key order', async () => {
    const { exec } = fakeTable(rows, 4);
    const r = reader(exec);
    const collect = async (it: AsyncIterable<{ key: string }>) => {
      const out: string[] = [];
      for await (const e of it) out.push(e.key);
      return out;
    };
    expect(await collect(r.reverseAll())).toEqual([...keys].reverse());
    expect(await collect(r.range('k05', 'k17'))).toEqual(keys.slice(5, 18));
    const p1: string[] = [];
    for await (const row of r.scanBytes({}, false, { partition: 1 })) p1.push(row.key.toString());
    expect(p1).toEqual(keys.filter((_, i) => i % 2 === 1));
  });

  it('a point get reads the one bucket of the key', async () => {
    const { exec, queries } = fakeTable(rows, 4);
    expect(await reader(exec).getBytes(Buffer.from('k07'), 1)).toEqual(Buffer.from('v7'));
    expect(queries).toEqual([
      {
        query: 'SELECT value FROM k.t WHERE partition = ? AND bucket = ? AND key = ?',
        params: [1, bucketOf(Buffer.from('k07'), 4), Buffer.from('k07')],
      },
    ]);
  });
});
