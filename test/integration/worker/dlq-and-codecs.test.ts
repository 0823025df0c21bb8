import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { jsonSerde } from '../../../src/store/serde';
import { createTopic, newRegistry, readTopic, ReadRecord } from '../helpers';
import { committedOffsets, configDoc, eventually, names, pipelineGroup, startWorker, waitCaughtUp } from './harness';
import { useStack } from './harness';

const header = (m: ReadRecord, h: string) => m.headers?.[h]?.toString();

describe('worker: converters, extractors, errors and the DLQ (real Kafka, Cassandra, registry)', () => {
  const stack = useStack();

  it('Avro values through the registry, composite key, field timestamp; bad records land in the DLQ with context headers', async () => {
    const n = names('avro');
    await createTopic(stack.kafka, n.topic, 1);
    await createTopic(stack.kafka, n.dlq, 1);
    const registry = newRegistry();
    const schema = {
      type: 'record',
      name: 'Price',
      namespace: 'adjunct.test',
      fields: [
        { name: 'region', type: 'string' },
        { name: 'sku', type: 'string' },
        { name: 'price', type: 'double' },
        { name: 'updatedAt', type: 'long' },
      ],
    };
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${n.topic}-value` });
    const good1 = await registry.encode(id, { region: 'eu', sku: 'a', price: 1.5, updatedAt: 5000 });
    const good2 = await registry.encode(id, { region: 'eu', sku: 'a', price: 2.5, updatedAt: 6000 });
    const unknownId = Buffer.from(good1);
    unknownId.writeInt32BE(987654, 1);
    const wrongMagic = Buffer.from(good1);
    wrongMagic[0] = 7;
    const truncated = good1.subarray(0, 7);
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'x', value: good1 },
        { key: 'x', value: unknownId, headers: { trace: 'abc' } },
        { key: 'x', value: wrongMagic },
        { key: 'x', value: truncated },
        { key: 'x', value: good2 },
      ],
    });
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        {
          name: 'prices',
          topics: [n.topic],
          keyConverter: 'string',
          valueConverter: 'avro',
          extract: {
            key: { from: 'value', fields: ['region', 'sku'] },
            value: { project: ['price'] },
            timestamp: { from: 'field', path: 'updatedAt' },
          },
          store: { name: 'prices', kind: 'versioned', scope: 'global', historyRetention: '1d' },
          errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq } },
        },
      ]),
    );
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'prices'), n.topic);
    const dlq = await readTopic(stack.kafka, stack.admin, n.dlq);
    expect(dlq.map((m) => header(m, '__connect.errors.offset')).sort()).toEqual(['1', '2', '3']);
    const byOffset = Object.fromEntries(dlq.map((m) => [header(m, '__connect.errors.offset')!, m]));
    expect(header(byOffset['1'], '__connect.errors.topic')).toBe(n.topic);
    expect(header(byOffset['1'], '__connect.errors.partition')).toBe('0');
    expect(header(byOffset['1'], '__connect.errors.stage')).toBe('VALUE_CONVERTER');
    expect(header(byOffset['1'], '__connect.errors.exception.message')).toMatch(/unknown schema id 987654/);
    expect(header(byOffset['1'], 'trace')).toBe('abc'); // original headers kept
    expect(byOffset['1'].value).toEqual(unknownId); // original bytes kept
    expect(header(byOffset['2'], '__connect.errors.exception.message')).toMatch(/magic byte/);
    expect(header(byOffset['3'], '__connect.errors.stage')).toBe('VALUE_CONVERTER');
    const { tupleKeySerde } = await import('../../../src/store/serde');
    const store = await openCassandraVersionedStore<unknown, { price: number }>({
      client: stack.client,
      keyspace: n.keyspace,
      storeName: 'prices',
      tableName: 'prices_g1',
      scope: 'global',
      historyRetentionMs: 86_400_000,
      keySerde: tupleKeySerde as never,
      valueSerde: jsonSerde(),
      writerId: 'reader',
    });
    expect((await store.get(['eu', 'a'] as never, 5500))?.value).toEqual({ price: 1.5 });
    expect((await store.get(['eu', 'a'] as never))?.value).toEqual({ price: 2.5 });
    expect(stack.worker.status().pipelines[0].counts).toMatchObject({ written: 2, deadLettered: 3 });
    expect(await stack.worker.metrics.registry.getSingleMetricAsString('adjunct_records_dead_lettered_total')).toMatch(
      /stage="value-convert"} 3/,
    );
  });

  it('Debezium envelopes and a custom TS extractor module; extractor failures go to the DLQ', async () => {
    const n = names('dbz');
    await createTopic(stack.kafka, n.topic, 1);
    await createTopic(stack.kafka, n.dlq, 1);
    const t2 = n.topic + '-custom';
    await createTopic(stack.kafka, t2, 1);
    const T = Date.now() - 60_000; // realistic source times: the Kafka tombstone below carries the current record time
    const env = (op: string, before: unknown, after: unknown, ts: number) =>
      JSON.stringify({ schema: {}, payload: { op, before, after, source: { ts_ms: T + ts } } });
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        { key: JSON.stringify({ id: 1 }), value: env('c', null, { id: 1, name: 'a' }, 100) },
        { key: JSON.stringify({ id: 1 }), value: env('u', { id: 1, name: 'a' }, { id: 1, name: 'b' }, 200) },
        { key: JSON.stringify({ id: 2 }), value: env('r', null, { id: 2, name: 'z' }, 50) },
        { key: JSON.stringify({ id: 2 }), value: env('d', { id: 2, name: 'z' }, null, 300) },
        { key: JSON.stringify({ id: 2 }), value: null },
        { key: JSON.stringify({ id: 3 }), value: env('?', null, null, 1) },
        { key: 'not json', value: env('c', null, { id: 9 }, 1) },
      ],
    });
    await producer.send({
      topic: t2,
      messages: [
        { key: 'k', value: JSON.stringify({ n: 1 }), timestamp: '10' },
        { key: 'k', value: JSON.stringify({ n: 2 }), timestamp: '20' },
      ],
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'adj-custom-'));
    fs.writeFileSync(
      path.join(dir, 'double.ts'),
      `import type { Extractor, SourceRecord } from '${path.resolve('src/extract')}';\nexport function createExtractor(o: { factor: number }): Extractor {\n  return { extract: (r: SourceRecord) => ({ key: 'custom-' + String(r.key), value: { n: (r.value as { n: number }).n * o.factor }, timestamp: r.timestamp }) };\n}\n`,
    );
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        {
          name: 'cdc',
          topics: [n.topic],
          keyConverter: 'json',
          valueConverter: 'json',
          extract: { preset: 'debezium' },
          store: { name: 'customers', keySerde: 'string' },
          errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq } },
        },
        {
          name: 'custom',
          topics: [t2],
          extract: { module: path.join(dir, 'double.ts'), options: { factor: 10 } },
          store: { name: 'custom' },
        },
      ]),
    );
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'cdc'), n.topic);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'custom'), t2);
    const s = await openCassandraVersionedStore<string, { name: string }>({
      client: stack.client,
      keyspace: n.keyspace,
      storeName: 'customers',
      tableName: 'customers_g1',
      scope: 'global',
      historyRetentionMs: 86_400_000,
      valueSerde: jsonSerde(),
      writerId: 'reader',
    });
    expect((await s.get('1', T + 150))?.value.name).toBe('a');
    expect((await s.get('1'))?.value.name).toBe('b');
    expect((await s.get('2', T + 299))?.value.name).toBe('z');
    expect(await s.get('2', T + 300)).toBeNull();
    expect(await s.get('2')).toBeNull();
    const dlq = await readTopic(stack.kafka, stack.admin, n.dlq);
    expect(dlq).toHaveLength(2);
    const stages = Object.fromEntries(dlq.map((m) => [header(m, '__connect.errors.offset'), header(m, '__connect.errors.stage')]));
    expect(stages).toEqual({ '5': 'TRANSFORMATION', '6': 'KEY_CONVERTER' });
    const c = await openCassandraVersionedStore<string, { n: number }>({
      client: stack.client,
      keyspace: n.keyspace,
      storeName: 'custom',
      tableName: 'custom_g1',
      scope: 'global',
      historyRetentionMs: 86_400_000,
      valueSerde: jsonSerde(),
      writerId: 'reader',
    });
    expect((await c.get('custom-k', 15))?.value.n).toBe(10);
    expect((await c.get('custom-k'))?.value.n).toBe(20);
  });

  it('tolerance none: stops at the first bad record with topic/partition/offset and commits nothing past it', async () => {
    const n = names('none');
    await createTopic(stack.kafka, n.topic, 1);
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'a', value: '{"v":1}' },
        { key: 'b', value: '{"v":2}' },
        { key: 'c', value: '{oops' },
        { key: 'd', value: '{"v":4}' },
      ],
    });
    stack.worker = await startWorker(configDoc(n.keyspace, n.group, [{ name: 'strict', topics: [n.topic], store: { name: 'strict' } }]));
    await eventually(async () => stack.worker!.state === 'FAILED', 30_000, 'worker FAILED');
    const fatal = stack.worker.lastError;
    expect(fatal?.message).toMatch(new RegExp(`${n.topic}/0@2 \\(stage value-convert\\)`));
    await stack.worker.stop();
    const committed = await committedOffsets(stack.admin, pipelineGroup(n.group, 'strict'), n.topic);
    expect(committed.get(0)).toBe(2n); // next to read = the bad record; nothing past it
  });
});
