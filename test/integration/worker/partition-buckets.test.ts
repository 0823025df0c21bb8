import { ensureCatalog } from '../../../src/catalog';
import { StoreCatalog } from '../../../src/generations';
import { openLookup } from '../../../src/lookup';
import { createKeyspace, createTopic } from '../helpers';
import { createUnbucketedTable, partitionKeyOf } from '../store/support';
import { configDoc, dumpVersioned, eventually, names, pipelineGroup, startWorker, useStack, waitCaughtUp } from './harness';

jest.setTimeout(240_000);

const recs = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, j) => ({
    key: `k${from + j}`,
    value: JSON.stringify({ i: from + j }),
    timestamp: String(1_000_000 + from + j),
  }));

describe('key-hash buckets: migration of partitioned stores (real Kafka + Cassandra)', () => {
  const stack = useStack();

  it('a table from before buckets keeps its layout and is written and read as before; a reload builds the bucketed layout', async () => {
    const n = names('buckets');
    await createTopic(stack.kafka, n.topic, 3);
    // What an adjunct from before buckets left behind: a catalog entry without buckets and a `((partition), key, valid_from)` table.
    await createKeyspace(stack.client, n.keyspace);
    await ensureCatalog(stack.client, n.keyspace);
    const catalog = new StoreCatalog(stack.client, n.keyspace);
    await catalog.register({
      store: 's',
      kind: 'versioned',
      scope: 'partitioned',
      keySerde: 'string',
      valueSerde: 'json',
      baseTable: 's',
      historyRetentionMs: 7 * 86_400_000,
      buckets: null,
    });
    await createUnbucketedTable(stack.client, n.keyspace, 's_g1', 'versioned');
    const producer = await stack.producer();
    await producer.send({ topic: n.topic, messages: recs(0, 90) });
    const doc = configDoc(n.keyspace, n.group, [
      { name: 'p', topics: [n.topic], store: { name: 's', scope: 'partitioned', historyRetention: '7d', buckets: 8 } },
    ]);
    stack.worker = await startWorker(doc);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic);

    // Generation 1 keeps its layout; the catalog now records the buckets for the tables created from here on.
    expect(await partitionKeyOf(stack.client, n.keyspace, 's_g1')).toEqual(['partition']);
    expect((await catalog.get('s'))?.buckets).toBe(8);
    const g1 = await dumpVersioned(stack.client, n.keyspace, 's_g1');
    expect(g1).toHaveLength(90);
    const lookup = await openLookup({ client: stack.client, keyspace: n.keyspace, generationCacheMs: 0 });
    try {
      for (const i of [0, 44, 89]) expect(await lookup.store('s').getValue(`k${i}`)).toEqual({ i });

      // A reload rebuilds the store into generation 2 with `(partition, bucket)` Cassandra partitions: the same rows.
      expect(await stack.worker.runner('p').reload()).toBe(2);
      await eventually(async () => (await catalog.get('s'))?.currentGeneration === 2, 120_000, 'switch to generation 2');
      expect(await partitionKeyOf(stack.client, n.keyspace, 's_g2')).toEqual(['partition', 'bucket']);
      expect(await dumpVersioned(stack.client, n.keyspace, 's_g2')).toEqual(g1);
      const spread = await stack.client.execute(`SELECT DISTINCT partition, bucket FROM ${n.keyspace}.s_g2`);
      expect(spread.rowLength).toBeGreaterThan(3); // 3 source partitions over up to 8 buckets each
      for (const i of [0, 44, 89]) expect(await lookup.store('s').getValue(`k${i}`)).toEqual({ i });
      expect(await lookup.store('s').get('k7', 1_000_007)).toEqual({ value: { i: 7 }, timestamp: 1_000_007 });

      // New records go to the bucketed generation and are found there.
      await producer.send({ topic: n.topic, messages: recs(90, 100) });
      await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 2), n.topic);
      expect(await dumpVersioned(stack.client, n.keyspace, 's_g2')).toHaveLength(100);
      expect(await lookup.store('s').getValue('k95')).toEqual({ i: 95 });
    } finally {
      await lookup.close();
    }
  });

  it('a store keeps the buckets it was created with: another number in the config is refused, naming the store', async () => {
    const n = names('buckets2');
    await createTopic(stack.kafka, n.topic, 1);
    const store = (buckets?: number) => ({ name: 's', scope: 'partitioned', historyRetention: '7d', ...(buckets ? { buckets } : {}) });
    stack.worker = await startWorker(configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: store() }]));
    await stack.worker.stop();
    stack.worker = undefined;
    expect((await new StoreCatalog(stack.client, n.keyspace).get('s'))?.buckets).toBe(64);
    expect(await partitionKeyOf(stack.client, n.keyspace, 's_g1')).toEqual(['partition', 'bucket']);
    const err = await startWorker(configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: store(16) }])).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'STORE_SHAPE_MISMATCH' });
    expect(String((err as Error).message)).toMatch(/store s was created with buckets=64 but the config says 16/);
  });
});
