import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { jsonSerde } from '../../../src/store/serde';
import { createTopic } from '../helpers';
import { configDoc, names, pipelineGroup, startWorker, waitCaughtUp } from './harness';
import { useStack } from './harness';

describe('worker: JSON changelog → versioned global store (real Kafka + Cassandra)', () => {
  const stack = useStack();

  it('KIP-889 motivating example: a late transaction a2 (time 2) joins rate b0, not b3', async () => {
    const n = names('kip889');
    await createTopic(stack.kafka, n.topic, 3);
    const producer = await stack.producer();
    // Currency-rates changelog B, keyed by currency, value {rate}, record timestamp = event time.
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'EUR', value: JSON.stringify({ rate: 1.0 }), timestamp: '1000' }, // b0 at t=1000
        { key: 'USD', value: JSON.stringify({ rate: 0.9 }), timestamp: '1000' },
        { key: 'EUR', value: JSON.stringify({ rate: 1.3 }), timestamp: '3000' }, // b3 at t=3000
        { key: 'EUR', value: JSON.stringify({ rate: 1.1 }), timestamp: '2500' }, // out of order: lands between b0 and b3
        { key: 'USD', value: null, timestamp: '4000' }, // rate deleted upstream (tombstone)
      ],
    });

    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        { name: 'rates', topics: [n.topic], store: { name: 'rates', kind: 'versioned', scope: 'global', historyRetention: '30d' } },
      ]),
    );
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);

    const rates = await openCassandraVersionedStore<string, { rate: number }>({
      client: stack.client,
      keyspace: n.keyspace,
      storeName: 'rates',
      tableName: 'rates_g1',
      scope: 'global',
      historyRetentionMs: 30 * 86_400_000,
      valueSerde: jsonSerde(),
      writerId: 'test-reader',
    });
    // Transactions stream A: a1 at 1500, a4 at 4000, then the late a2 at 2000.
    expect((await rates.get('EUR', 1500))?.value.rate).toBe(1.0);
    expect((await rates.get('EUR', 4000))?.value.rate).toBe(1.3);
    expect((await rates.get('EUR', 2000))?.value.rate).toBe(1.0); // b0, not b3
    expect((await rates.get('EUR', 2600))?.value.rate).toBe(1.1); // the out-of-order version
    expect(await rates.get('EUR', 999)).toBeNull();
    expect((await rates.get('USD', 3999))?.value.rate).toBe(0.9);
    expect(await rates.get('USD', 4000)).toBeNull(); // tombstone
    expect(await rates.get('USD')).toBeNull();
    const h = await rates.history('EUR', { order: 'asc' });
    expect(h.map((r) => [r.timestamp, r.validTo])).toEqual([
      [1000, 2500],
      [2500, 3000],
      [3000, undefined],
    ]);
    const status = stack.worker.status();
    expect(status.pipelines[0].counts).toMatchObject({ consumed: 5, written: 5, deadLettered: 0 });
    // Metrics move as records flow: counters per pipeline, committed offsets and lag per partition.
    const metrics = await stack.worker.metrics.registry.metrics();
    expect(metrics).toMatch(/adjunct_records_consumed_total\{pipeline="rates"\} 5/);
    expect(metrics).toMatch(/adjunct_records_written_total\{pipeline="rates"\} 5/);
    expect(metrics).toMatch(/adjunct_consumer_lag\{pipeline="rates",topic="[^"]+",partition="\d"\} 0/);
    expect(status.pipelines[0].partitions.every((p) => p.lag === 0)).toBe(true);
  });

  it('records larger than kafka.fetch.maxBytesPerPartition are still consumed whole (each fetch returns its first batch)', async () => {
    const n = names('bigfetch');
    await createTopic(stack.kafka, n.topic, 1);
    const producer = await stack.producer();
    const pad = 'x'.repeat(8_000);
    for (let i = 0; i < 5; i++)
      await producer.send({
        topic: n.topic,
        messages: [{ key: `k${i % 2}`, value: JSON.stringify({ i, pad }), timestamp: String(1000 + i) }],
      });
    const doc = configDoc(n.keyspace, n.group, [{ name: 'big', topics: [n.topic], store: { name: 'big', historyRetention: '30d' } }]);
    doc.kafka = { ...(doc.kafka as object), fetch: { maxBytesPerPartition: 1024, maxBytes: 1024 } };
    stack.worker = await startWorker(doc);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'big'), n.topic);
    expect(stack.worker.status().pipelines[0].counts).toMatchObject({ consumed: 5, written: 5, deadLettered: 0 });
    const store = await openCassandraVersionedStore<string, { i: number }>({
      client: stack.client,
      keyspace: n.keyspace,
      storeName: 'big',
      tableName: 'big_g1',
      scope: 'global',
      historyRetentionMs: 30 * 86_400_000,
      valueSerde: jsonSerde(),
      writerId: 'test-reader',
    });
    expect((await store.history('k0', { order: 'asc' })).map((r) => r.value.i)).toEqual([0, 2, 4]);
    expect((await store.get('k1'))?.value.i).toBe(3);
  });

  it('event time from a field: a tombstone takes the partition stream time; a stray jump is counted; status shows the horizon', async () => {
    const n = names('eventtime');
    await createTopic(stack.kafka, n.topic, 1);
    const producer = await stack.producer();
    // Record timestamps are far in the future on purpose: the store must only use the `ts` field (or stream time).
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'k1', value: JSON.stringify({ ts: 1000, v: 1 }), timestamp: '9000000' },
        { key: 'k1', value: JSON.stringify({ ts: 2000, v: 2 }), timestamp: '9000000' },
        { key: 'k2', value: JSON.stringify({ ts: 2500, v: 0 }), timestamp: '9000000' },
        { key: 'k1', value: null, timestamp: '9000000' }, // no ts field: stream time 2500 (onMissing default)
        { key: 'k3', value: JSON.stringify({ ts: 100_000, v: 3 }), timestamp: '9000000' }, // jumps 97.5 s > retention 10 s
      ],
    });
    const pipeline = {
      name: 'p',
      topics: [n.topic],
      extract: { timestamp: { from: 'field', path: 'ts' } },
      store: { name: 's', historyRetention: '10s' },
    };
    stack.worker = await startWorker(configDoc(n.keyspace, n.group, [pipeline]));
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic);
    const rows = (await stack.client.execute(`SELECT key, valid_from, value, writer FROM ${n.keyspace}.s_g1`)).rows
      .map((r) => `${r.get('key').toString()}@${r.get('valid_from')}:${r.get('value') === null ? 'tombstone' : 'value'}:${r.get('writer')}`)
      .sort();
    expect(rows).toEqual([
      `k1@1000:value:${n.topic}:0`,
      `k1@2000:value:${n.topic}:0`,
      `k1@2500:tombstone:${n.topic}:0`,
      `k2@2500:value:${n.topic}:0`,
      `k3@100000:value:${n.topic}:0`,
    ]);
    expect(await stack.worker.metrics.registry.metrics()).toMatch(/adjunct_stream_time_jumps_total\{pipeline="p"\} 1/);
    expect(stack.worker.status().pipelines[0].partitions).toMatchObject([{ partition: 0, observedStreamTime: 100_000, horizon: 90_000 }]);
  });

  it('replaying the topic from scratch into a second group leaves the same rows (idempotent writes)', async () => {
    const n = names('replay');
    await createTopic(stack.kafka, n.topic, 2);
    const producer = await stack.producer();
    const msgs = Array.from({ length: 300 }, (_, i) => ({
      key: `k${i % 17}`,
      value: JSON.stringify({ i }),
      timestamp: String(10_000 + ((i * 7919) % 500)),
    }));
    await producer.send({ topic: n.topic, messages: msgs });
    const doc = configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '1d' } }]);
    stack.worker = await startWorker(doc);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic);
    await stack.worker.stop();
    const dump = async () =>
      (await stack.client.execute(`SELECT key, valid_from, value FROM ${n.keyspace}.s_g1`)).rows
        .map((r) => `${r.get('key').toString()}|${r.get('valid_from')}|${r.get('value')?.toString()}`)
        .sort();
    const first = await dump();
    expect(first.length).toBeGreaterThan(17);
    // Another worker group is another deployment: the first one's tables are handed over (owner row deleted) first.
    await stack.client.execute(`DELETE FROM ${n.keyspace}.adjunct_table_owners WHERE base_table = 's'`);
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group + 'b', [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '1d' } }]),
    );
    await waitCaughtUp(stack.admin, pipelineGroup(n.group + 'b', 'p'), n.topic);
    expect(await dump()).toEqual(first);
    // The second run really rewrote every record (rather than finding the first run's rows untouched).
    expect(stack.worker.status().pipelines[0].counts).toMatchObject({ consumed: 300, written: 300, expired: 0 });
  });
});
