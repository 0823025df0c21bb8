import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { parse } from 'protobufjs';
import { openCassandraVersionedStore } from '../../../src/store/cassandra/open-versioned-store';
import { jsonSerde } from '../../../src/store/serde';
import { createTopic, newRegistry, readTopic, ReadRecord } from '../helpers';
import { protobufRecord } from './protobuf-record';
import { committedOffsets, eventually, names, pipelineGroup, runPipeline, useStack, waitCaughtUp } from '../worker/harness';

const header = (m: ReadRecord, h: string) => m.headers?.[h]?.toString();

describe('registry converters with evolving schemas: JSON Schema and Protobuf (real Kafka, Cassandra, registry)', () => {
  const stack = useStack();

  const openStore = (keyspace: string, store: string) =>
    openCassandraVersionedStore<string, Record<string, unknown>>({
      client: stack.client,
      keyspace,
      storeName: store,
      tableName: `${store}_g1`,
      scope: 'global',
      historyRetentionMs: 86_400_000,
      valueSerde: jsonSerde(),
      writerId: 'reader',
    });

  it('json-schema: v1 and a compatible v2 with a new field are both stored; invalid payloads and unknown ids go to the DLQ', async () => {
    const n = names('jsonschema');
    await createTopic(stack.kafka, n.topic, 1);
    await createTopic(stack.kafka, n.dlq, 1);
    const registry = newRegistry();
    const v1 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'Rate',
      type: 'object',
      additionalProperties: false,
      properties: { currency: { type: 'string' }, rate: { type: 'number' }, ts: { type: 'integer' } },
      required: ['currency', 'rate', 'ts'],
    };
    const v2 = { ...v1, properties: { ...v1.properties, source: { type: 'string' } } };
    const subject = `${n.topic}-value`;
    const id1 = (await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(v1) }, { subject })).id;
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'EUR', value: await registry.encode(id1, { currency: 'EUR', rate: 1.1, ts: 1000 }) },
        { key: 'USD', value: await registry.encode(id1, { currency: 'USD', rate: 0.9, ts: 1000 }) },
      ],
    });
    await runPipeline(stack, n, {
      name: 'rates',
      keyConverter: 'string',
      valueConverter: 'json-schema',
      extract: { timestamp: { from: 'field', path: 'ts' } },
      store: { name: 'rates' },
      errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq } },
    });
    // The schema evolves while the worker runs.
    const id2 = (await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(v2) }, { subject })).id;
    expect(id2).not.toBe(id1);
    const unknownId = Buffer.from(await registry.encode(id2, { currency: 'EUR', rate: 5, ts: 1 }));
    unknownId.writeInt32BE(987_650_001, 1);
    const invalid = Buffer.concat([unknownId.subarray(0, 5), Buffer.from('{"currency":"EUR","rate":"high","ts":3000}')]);
    invalid.writeInt32BE(id2, 1);
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'EUR', value: await registry.encode(id2, { currency: 'EUR', rate: 1.2, ts: 2000, source: 'ecb' }) },
        { key: 'EUR', value: unknownId },
        { key: 'EUR', value: invalid },
      ],
    });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    const store = await openStore(n.keyspace, 'rates');
    expect((await store.get('EUR', 1500))?.value).toEqual({ currency: 'EUR', rate: 1.1, ts: 1000 });
    expect((await store.get('EUR'))?.value).toEqual({ currency: 'EUR', rate: 1.2, ts: 2000, source: 'ecb' });
    expect((await store.get('EUR'))?.timestamp).toBe(2000);
    expect((await store.get('USD'))?.value).toEqual({ currency: 'USD', rate: 0.9, ts: 1000 });
    const dlq = await readTopic(stack.kafka, stack.admin, n.dlq);
    expect(dlq).toHaveLength(2);
    const byOffset = Object.fromEntries(dlq.map((m) => [header(m, '__connect.errors.offset')!, m]));
    expect(Object.keys(byOffset).sort()).toEqual(['3', '4']);
    expect(header(byOffset['3'], '__connect.errors.topic')).toBe(n.topic);
    expect(header(byOffset['3'], '__connect.errors.partition')).toBe('0');
    expect(header(byOffset['3'], '__connect.errors.exception.message')).toMatch(/unknown schema id 987650001/);
    expect(header(byOffset['4'], '__connect.errors.exception.message')).toMatch(
      new RegExp(`json-schema decode failed \\(schema ${id2}\\).*/rate`),
    );
    expect(stack.worker!.status().pipelines[0].counts).toMatchObject({ written: 3, deadLettered: 2 });
  });

  it('protobuf: message indexes select the type; v1 and a compatible v2 with a new field are both stored; an unknown id stops the pipeline at its offset', async () => {
    const n = names('protobuf');
    await createTopic(stack.kafka, n.topic, 1);
    const registry = newRegistry();
    // Rate is the second top-level message: its records carry message indexes [1], not the [0] shorthand.
    const v1 =
      'syntax = "proto3";\npackage adjunct.it;\nmessage Meta { string note = 1; }\nmessage Rate {\n  string currency = 1;\n  double rate = 2;\n  int64 ts = 3;\n  enum Kind { SPOT = 0; FORWARD = 1; }\n  Kind kind = 4;\n}\n';
    const v2 = v1.replace('  Kind kind = 4;\n', '  Kind kind = 4;\n  string source = 5;\n');
    const subject = `${n.topic}-value`;
    const id1 = (await registry.register({ type: SchemaType.PROTOBUF, schema: v1 }, { subject })).id;
    const rate1 = parse(v1).root.lookupType('adjunct.it.Rate');
    const meta1 = parse(v1).root.lookupType('adjunct.it.Meta');
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        {
          key: 'EUR',
          value: protobufRecord(id1, [1], rate1, { currency: 'EUR', rate: 1.1, ts: 1000, kind: 1 }),
          timestamp: '1000',
        },
        {
          key: 'note',
          value: protobufRecord(id1, [0], meta1, { note: 'first message, index shorthand' }),
          timestamp: '1000',
        },
      ],
    });
    await runPipeline(stack, n, {
      name: 'rates',
      keyConverter: 'string',
      valueConverter: 'protobuf',
      store: { name: 'rates' },
    });
    const id2 = (await registry.register({ type: SchemaType.PROTOBUF, schema: v2 }, { subject })).id;
    expect(id2).not.toBe(id1);
    const rate2 = parse(v2).root.lookupType('adjunct.it.Rate');
    await producer.send({
      topic: n.topic,
      messages: [
        {
          key: 'EUR',
          value: protobufRecord(id2, [1], rate2, { currency: 'EUR', rate: 1.2, ts: '9007199254740993', source: 'ecb' }),
          timestamp: '5000',
        },
      ],
    });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    const store = await openStore(n.keyspace, 'rates');
    const history = await store.history('EUR', { order: 'asc' }); // oldest first: record timestamps 1000, then 5000
    expect(history.map((v) => v.value)).toEqual([
      { currency: 'EUR', rate: 1.1, ts: '1000', kind: 'FORWARD' }, // decoded with its own (v1) schema: no source field
      { currency: 'EUR', rate: 1.2, ts: '9007199254740993', kind: 'SPOT', source: 'ecb' }, // int64 as a string: no precision lost
    ]);
    expect((await store.get('note'))?.value).toEqual({ note: 'first message, index shorthand' });

    const unknown = protobufRecord(987_650_002, [1], rate2, { currency: 'EUR' });
    await producer.send({ topic: n.topic, messages: [{ key: 'EUR', value: unknown }] });
    await eventually(async () => stack.worker!.state === 'FAILED', 30_000, 'worker FAILED');
    expect(stack.worker!.lastError?.message).toMatch(new RegExp(`${n.topic}/0@3 \\(stage value-convert\\): unknown schema id 987650002`));
    await stack.worker!.stop();
    expect((await committedOffsets(stack.admin, pipelineGroup(n.group, 'rates'), n.topic)).get(0)).toBe(3n);
  });
});
