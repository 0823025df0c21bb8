import { InvalidIdentifierError, StoreError } from '../../../src/errors';
import { openCassandraKeyValueStore } from '../../../src/store/cassandra/open-kv-store';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { TableOptions } from '../../../src/store/cassandra/table-options';
import { newCassandraClient, uniqueName } from '../helpers';
import { useStoreKeyspace } from './support';

jest.setTimeout(120_000);

const ks = useStoreKeyspace('it_store_schema', { counting: true });

const base = () => ({
  client: ks.client,
  keyspace: ks.keyspace,
  storeName: 'schema-store',
  scope: 'global' as const,
  historyRetentionMs: 1000,
});

describe('schema and identifiers', () => {
  it('rejects injection in table options, store names and keyspaces before any CQL is sent', async () => {
    const attempts: Record<string, unknown>[] = [
      { tableOptions: { compaction: { class: "LeveledCompactionStrategy'}; DROP TABLE x" } } },
      { tableOptions: { comment: "it's" } },
      { tableOptions: { 'compaction; drop': 1 } as unknown as TableOptions },
      { tableOptions: { caching: { keys: "ALL'}" } } },
      { tableOptions: { gc_grace_seconds: '1; DROP TABLE x' } as unknown as TableOptions },
      { tableOptions: { bloom_filter_fp_chance: Number.NaN } },
      { storeName: 'x; DROP TABLE y' },
      { storeName: '1starts-with-digit' },
      { tableName: 'Bad-Name' },
      { keyspace: 'ks; DROP KEYSPACE system' },
      { keyspace: 'a'.repeat(49) },
      { replication: { class: 'NetworkTopologyStrategy', datacenters: { "dc1': 1}; DROP": 1 } } },
    ];
    ks.tracker.reset();
    for (const a of attempts) {
      await expect(openCassandraVersionedStore({ ...base(), ...a })).rejects.toBeInstanceOf(InvalidIdentifierError);
      await expect(openCassandraKeyValueStore({ ...base(), ...a })).rejects.toBeInstanceOf(InvalidIdentifierError);
    }
    await expect(openCassandraVersionedStore({ ...base(), tableOptions: { compaction: { class: "X'; DROP" } } })).rejects.toThrow(
      /compaction\.class/,
    );
    expect(ks.tracker.counts().total).toBe(0);
  });

  it('migrates a versioned table created before the writer column (ALTER TABLE ADD once), and old rows stay readable', async () => {
    await openCassandraVersionedStore({ ...base(), tableName: 'probe' }); // creates the keyspace
    await ks.client.execute(
      `CREATE TABLE ${ks.keyspace}.legacy (key blob, valid_from bigint, value blob, PRIMARY KEY ((key), valid_from)) WITH CLUSTERING ORDER BY (valid_from DESC)`,
    );
    await ks.client.execute(
      `INSERT INTO ${ks.keyspace}.legacy (key, valid_from, value) VALUES (?, ?, ?)`,
      [Buffer.from('k'), 10, Buffer.from('old')],
      { prepare: true },
    );
    await expect(openCassandraVersionedStore({ ...base(), tableName: 'legacy', createTables: false })).rejects.toMatchObject({
      code: 'SCHEMA_OUTDATED',
    });
    const s = await openCassandraVersionedStore({ ...base(), tableName: 'legacy', writerId: 'topic:0' });
    expect(await s.put('k', 'new', 20)).toBe(-1);
    expect(await s.get('k', 15)).toEqual({ value: 'old', timestamp: 10, validTo: 20 });
    const rows = (
      await ks.client.execute(`SELECT valid_from, writer FROM ${ks.keyspace}.legacy WHERE key = ?`, [Buffer.from('k')], { prepare: true })
    ).rows;
    expect(rows.map((r) => [Number(r.valid_from), r.writer])).toEqual([
      [20, 'topic:0'],
      [10, null],
    ]);
    await s.close();
    // Reopening finds the column: no second ALTER.
    ks.tracker.reset();
    await (await openCassandraVersionedStore({ ...base(), tableName: 'legacy', writerId: 'topic:0' })).close();
    expect(ks.tracker.queries.filter((q) => /ALTER/i.test(q))).toEqual([]);
  });

  it('new versioned tables cluster by writer; a key moved between writers keeps one answer per timestamp', async () => {
    const open = (writerId: string) => openCassandraVersionedStore({ ...base(), tableName: 'clustered', writerId });
    const t0 = await open('t:0');
    const t1 = await open('t:1');
    const kinds = await ks.client.execute(
      'SELECT column_name, kind FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
      [ks.keyspace, 'clustered'],
    );
    expect(Object.fromEntries(kinds.rows.map((r) => [String(r.column_name), String(r.kind)]))).toEqual({
      key: 'partition_key',
      valid_from: 'clustering',
      writer: 'clustering',
      value: 'regular',
    });
    // The key's records moved from partition 1 to partition 0 (a changed partitioner); both wrote it at 20 and 30.
    for (const [s, t, v] of [
      [t1, 10, 'a'],
      [t1, 20, 'b1'],
      [t0, 20, 'b'],
      [t1, 30, 'c'],
      [t0, 30, null],
      [t0, 40, 'd'],
    ] as const)
      await s.put('k', v, t);
    // The row whose writer sorts first answers at a shared timestamp, in every read.
    expect(await t1.get('k', 25)).toEqual({ value: 'b', timestamp: 20, validTo: 30 });
    expect(await t1.get('k', 35)).toBeNull();
    expect(await t1.get('k', 15)).toEqual({ value: 'a', timestamp: 10, validTo: 20 });
    expect(await t1.history('k', { fromTime: 0, toTime: 100 })).toEqual([
      { value: 'd', timestamp: 40 },
      { value: 'b', timestamp: 20, validTo: 30 },
      { value: 'a', timestamp: 10, validTo: 20 },
    ]);
    await Promise.all([t0.close(), t1.close()]);
  });

  it("opening an existing store reads its table's columns once (partition key, kinds and missing columns from one read)", async () => {
    const columnReads = () => ks.tracker.queries.filter((q) => /FROM system_schema\.columns/.test(q)).length;
    const stores = [
      { open: openCassandraVersionedStore, options: { ...base(), tableName: 'reopen_vp', scope: 'partitioned' as const, partition: 0 } },
      { open: openCassandraVersionedStore, options: { ...base(), tableName: 'reopen_vg' } },
      { open: openCassandraKeyValueStore, options: { ...base(), tableName: 'reopen_kp', scope: 'partitioned' as const, partition: 0 } },
    ];
    for (const { open, options } of stores) {
      await (await open(options as never)).close();
      ks.tracker.reset();
      const store = await open(options as never);
      expect({ table: options.tableName, reads: columnReads() }).toEqual({ table: options.tableName, reads: 1 });
      await store.close();
    }
  });

  it('applies validated table options', async () => {
    const s = await openCassandraVersionedStore({
      ...base(),
      storeName: 'With.Options-1',
      tableOptions: {
        compaction: { class: 'SizeTieredCompactionStrategy', min_threshold: 4 },
        comment: 'adjunct test',
        gc_grace_seconds: 3600,
      },
    });
    // KIP-889 keeps the latest version for ever: a versioned store refuses a TTL before any CQL (a kv store takes it).
    for (const ttl of [{ defaultTtlSeconds: 60 }, { tableOptions: { default_time_to_live: 60 } }]) {
      await expect(openCassandraVersionedStore({ ...base(), storeName: 'with_ttl', ...ttl })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/time-to-live applies only to kv stores/),
      });
    }
    const kvTtl = await openCassandraKeyValueStore({ ...base(), storeName: 'kv_with_ttl', defaultTtlSeconds: 86400 });
    await kvTtl.close();
    const ttlRow = await ks.client.execute(
      'SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
      [ks.keyspace, 'kv_with_ttl'],
    );
    expect(ttlRow.first().default_time_to_live).toBe(86400);
    const rs = await ks.client.execute(
      'SELECT compaction, comment, gc_grace_seconds, default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
      [ks.keyspace, 'with_options_1'],
    );
    const row = rs.first();
    expect(row.compaction.class).toMatch(/SizeTieredCompactionStrategy/);
    expect(row.comment).toBe('adjunct test');
    expect(row.gc_grace_seconds).toBe(3600);
    expect(row.default_time_to_live).toBe(0);
    await s.close();
    const d = await openCassandraKeyValueStore({ ...base(), storeName: 'default-options' });
    const rs2 = await ks.client.execute('SELECT compaction FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?', [
      ks.keyspace,
      'default_options',
    ]);
    // The stack runs Cassandra 5: the unified strategy is the default there (leveled before 5.0).
    expect(rs2.first().compaction.class).toMatch(/UnifiedCompactionStrategy/);
    await d.close();
  });

  it('two concurrent opens of the same new store (separate clients, new keyspace) both succeed', async () => {
    // Four rounds: a replica can list a table just created before its store is open ("Unknown CF", about one open in
    // twelve before the usability probe waited for it).
    const other = await newCassandraClient();
    try {
      for (let round = 0; round < 4; round++) {
        const raceKeyspace = uniqueName('it_store_race');
        try {
          const opts = {
            keyspace: raceKeyspace,
            storeName: 'raced',
            scope: 'partitioned' as const,
            partition: 0,
            historyRetentionMs: 1000,
          };
          const [a, b, c] = await Promise.all([
            openCassandraVersionedStore({ ...opts, client: ks.client }),
            openCassandraVersionedStore({ ...opts, client: other, partition: 1 }),
            openCassandraVersionedStore({ ...opts, client: ks.client, partition: 2 }),
          ]);
          await a.put('k', 'from-a', 10);
          await b.put('k', 'from-b', 20);
          expect(await a.get('k')).toEqual({ value: 'from-a', timestamp: 10 });
          expect(await b.get('k')).toEqual({ value: 'from-b', timestamp: 20 });
          expect(await c.get('k')).toBeNull();
          await Promise.all([a.close(), b.close(), c.close()]);
        } finally {
          await ks.client.execute(`DROP KEYSPACE IF EXISTS ${raceKeyspace}`);
        }
      }
    } finally {
      await other.shutdown();
    }
  });

  it('a missing keyspace with autoCreate: false is a typed error', async () => {
    const ks = uniqueName('it_store_missing');
    const err = await openCassandraVersionedStore({ ...base(), keyspace: ks, autoCreate: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('KEYSPACE_NOT_FOUND');
    const err2 = await openCassandraKeyValueStore({ ...base(), keyspace: ks, autoCreate: false }).catch((e: unknown) => e);
    expect((err2 as StoreError).code).toBe('KEYSPACE_NOT_FOUND');
    const err3 = await openCassandraVersionedStore({ ...base(), storeName: 'never-created', createTables: false }).catch((e: unknown) => e);
    expect((err3 as StoreError).code).toBe('TABLE_NOT_FOUND');
  });

  it('approximateNumEntries is opt-in and closed stores refuse work', async () => {
    const kv = await openCassandraKeyValueStore({ ...base(), storeName: 'count-off' });
    await expect(kv.approximateNumEntries()).rejects.toMatchObject({ code: 'COUNT_NOT_ENABLED' });
    await kv.close();
    await expect(kv.get('x')).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    const vs = await openCassandraVersionedStore({ ...base(), storeName: 'closing' });
    await vs.close();
    await expect(vs.put('x', 'y', 1)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
  });
});
