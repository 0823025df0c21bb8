import { Client, types } from 'cassandra-driver';
import { COMPATIBILITY, SchemaType } from '@kafkajs/confluent-schema-registry';
import { parse } from 'protobufjs';
import { createTopic, newRegistry, readTopic } from '../helpers';
import { protobufRecord } from '../converters/protobuf-record';
import { eventually, names, pipelineGroup, runPipeline, useStack, waitCaughtUp } from './harness';

/** What the plain-CQL recipe of the README answers for `key as of asOf`. */
interface PlainAnswer {
  table: string;
  validFrom: number;
  validTo?: number;
  row: types.Row;
}

/**
 * The README's "Reading with plain CQL" recipe, written with nothing but the raw cassandra-driver (no adjunct code):
 * one catalog read, the table of the current generation, the as-of pair of queries, and the writer's horizon.
 */
async function plainAsOf(client: Client, ks: string, store: string, key: string, asOf: number): Promise<PlainAnswer | null> {
  const q = { prepare: true };
  const entry = (
    await client.execute(
      `SELECT base_table, current_generation, history_retention_ms FROM ${ks}.adjunct_stores WHERE store = ?`,
      [store],
      q,
    )
  ).first();
  if (!entry) throw new Error(`unknown store ${store}`);
  const table = `${entry.get('base_table')}_g${entry.get('current_generation')}`;
  const k = Buffer.from(key, 'utf8'); // string key serde: the UTF-8 bytes
  const t = types.Long.fromNumber(asOf);
  const [floorRs, nextRs] = await Promise.all([
    client.execute(`SELECT * FROM ${ks}.${table} WHERE key = ? AND valid_from <= ? LIMIT 1`, [k, t], q),
    client.execute(`SELECT valid_from FROM ${ks}.${table} WHERE key = ? AND valid_from > ? ORDER BY valid_from ASC LIMIT 1`, [k, t], q),
  ]);
  const floor = floorRs.first();
  if (!floor || floor.get('value') === null) return null; // no version, or a tombstone
  const next = nextRs.first();
  const st = (
    await client.execute(
      `SELECT stream_time FROM ${ks}.adjunct_stream_time WHERE store = ? AND writer = ?`,
      [table, floor.get('writer')],
      q,
    )
  ).first();
  const horizon = st ? Number(st.get('stream_time')) - Number(entry.get('history_retention_ms')) : -Infinity;
  const validFrom = Number(floor.get('valid_from'));
  if (asOf < horizon) return next ? null : { table, validFrom, row: floor }; // below the horizon only the latest answers, without validTo
  return next ? { table, validFrom, validTo: Number(next.get('valid_from')), row: floor } : { table, validFrom, row: floor };
}

async function columnTypes(client: Client, ks: string, table: string): Promise<Record<string, string>> {
  const rs = await client.execute('SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?', [
    ks,
    table,
  ]);
  return Object.fromEntries(rs.rows.map((r) => [r.get('column_name'), r.get('type')]));
}

const RATE_V1 = {
  type: 'record',
  name: 'Rate',
  namespace: 'adjunct.it',
  fields: [
    { name: 'currency', type: 'string' },
    { name: 'rate', type: 'double' },
    { name: 'bid', type: { type: 'bytes', logicalType: 'decimal', precision: 10, scale: 4 } },
    { name: 'ts', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'tags', type: { type: 'array', items: 'string' } },
  ],
};
const RATE_V2 = { ...RATE_V1, fields: [...RATE_V1.fields, { name: 'sourceName', type: ['null', 'string'], default: null }] };

const HOUR = 3_600_000;

describe('typed tables for plain-CQL readers (real Kafka, Cassandra, registry; read with the raw driver)', () => {
  const stack = useStack();

  it('Avro schema → typed columns; a new field adds a column; the README recipe reads as-of with validTo and horizon, and follows a generation switch within one catalog read', async () => {
    const n = names('typed');
    await createTopic(stack.kafka, n.topic, 1);
    const registry = newRegistry();
    const subject = `${n.topic}-value`;
    const id1 = (await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(RATE_V1) }, { subject })).id;
    const producer = await stack.producer();
    const v1 = (currency: string, rate: number, bidUnscaled: number, ts: number) =>
      registry.encode(id1, { currency, rate, bid: Buffer.from([bidUnscaled >> 8, bidUnscaled & 0xff]), ts, tags: ['x'] });
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'EUR', value: await v1('EUR', 1.1, 12345, 1000) },
        { key: 'EUR', value: await v1('EUR', 1.2, 12400, 2000) },
        { key: 'USD', value: await v1('USD', 0.9, 9000, 1000) },
      ],
    });
    await runPipeline(stack, n, {
      name: 'rates',
      keyConverter: 'string',
      valueConverter: 'avro',
      extract: { timestamp: { from: 'field', path: 'ts' } },
      store: { name: 'rates', typed: true, keyColumns: { currency: 'text' }, historyRetention: '1h' },
      keepPreviousGeneration: '1h',
    });

    // Scalar fields became typed columns next to the layout's; the array stays in the value blob only.
    expect(await columnTypes(stack.client, n.keyspace, 'rates_g1')).toEqual({
      key: 'blob',
      valid_from: 'bigint',
      value: 'blob',
      writer: 'text',
      key_currency: 'text',
      currency: 'text',
      rate: 'double',
      bid: 'decimal',
      ts: 'timestamp',
    });
    const eur1500 = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 1500);
    expect(eur1500).toMatchObject({ table: 'rates_g1', validFrom: 1000, validTo: 2000 });
    expect(eur1500!.row.get('rate')).toBe(1.1);
    expect(eur1500!.row.get('bid').toString()).toBe('1.2345');
    expect((eur1500!.row.get('ts') as Date).getTime()).toBe(1000);
    expect(eur1500!.row.get('currency')).toBe('EUR');
    expect(eur1500!.row.get('key_currency')).toBe('EUR');
    const eurNow = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 10_000);
    expect(eurNow).toMatchObject({ validFrom: 2000 });
    expect(eurNow!.validTo).toBeUndefined();
    expect(await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 999)).toBeNull();

    // The schema evolves while the worker runs: the new field becomes a column (camelCase → snake_case).
    const id2 = (await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(RATE_V2) }, { subject })).id;
    await producer.send({
      topic: n.topic,
      messages: [
        {
          key: 'EUR',
          value: await registry.encode(id2, {
            currency: 'EUR',
            rate: 1.3,
            bid: Buffer.from([0x30, 0xd4]),
            ts: 3000,
            tags: [],
            sourceName: 'ecb',
          }),
        },
      ],
    });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    expect((await columnTypes(stack.client, n.keyspace, 'rates_g1')).source_name).toBe('text');
    const eur3000 = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 3000);
    expect(eur3000!.row.get('source_name')).toBe('ecb');
    expect(eur3000!.row.get('bid').toString()).toBe('1.2500');
    expect((await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 1500))!.row.get('source_name')).toBeNull();

    // The horizon: one record moves the partition's stream time 2 h ahead (retention 1 h). EUR@1500 now lies below the
    // horizon and is not EUR's latest version: no answer. EUR@3000 is EUR's latest: it answers, without validTo.
    await producer.send({
      topic: n.topic,
      messages: [
        {
          key: 'GBP',
          value: await registry.encode(id2, {
            currency: 'GBP',
            rate: 0.8,
            bid: Buffer.from([0x1f, 0x40]),
            ts: 3000 + 2 * HOUR,
            tags: [],
            sourceName: null,
          }),
        },
      ],
    });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    await eventually(
      async () => (await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 1500)) === null,
      30_000,
      'stream time persisted with the commit',
    );
    const below = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 3500);
    expect(below).toMatchObject({ validFrom: 3000 });
    expect(below!.validTo).toBeUndefined();

    // A reload builds generation 2 (typed from the start, with source_name); once the catalog row names it, the very
    // next recipe call (one catalog read) reads the complete new table.
    await stack.worker!.runner('rates').reload();
    await eventually(
      async () =>
        (
          await stack.client.execute(`SELECT current_generation FROM ${n.keyspace}.adjunct_stores WHERE store = ?`, ['rates'], {
            prepare: true,
          })
        )
          .first()
          ?.get('current_generation') === 2,
      60_000,
      'switch to generation 2',
    );
    const after = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 3500);
    expect(after).toMatchObject({ table: 'rates_g2', validFrom: 3000 });
    expect(after!.row.get('source_name')).toBe('ecb');
    expect((await plainAsOf(stack.client, n.keyspace, 'rates', 'USD', 3000 + 2 * HOUR))?.row.get('rate')).toBe(0.9);
    expect((await columnTypes(stack.client, n.keyspace, 'rates_g2')).source_name).toBe('text');
  });

  it('Protobuf: the columns are those of the message type the records carry (not the first message of the file); a new field adds a column', async () => {
    const n = names('typedproto');
    await createTopic(stack.kafka, n.topic, 1);
    const registry = newRegistry();
    const subject = `${n.topic}-value`;
    const v1 =
      'syntax = "proto3";\npackage adjunct.typed;\nmessage Meta { string note = 1; }\nmessage Rate {\n  string currency = 1;\n  double rate = 2;\n  int64 ts_ms = 3;\n  enum Kind { SPOT = 0; FORWARD = 1; }\n  Kind kind = 4;\n  repeated string tags = 5;\n}\n';
    const v2 = v1.replace('  repeated string tags = 5;\n', '  repeated string tags = 5;\n  string source = 6;\n');
    const id1 = (await registry.register({ type: SchemaType.PROTOBUF, schema: v1 }, { subject })).id;
    const rate1 = parse(v1).root.lookupType('adjunct.typed.Rate');
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [
        {
          key: 'EUR',
          value: protobufRecord(id1, [1], rate1, { currency: 'EUR', rate: 1.1, tsMs: 1000, kind: 1, tags: ['a'] }),
          timestamp: '1000',
        },
      ],
    });
    await runPipeline(stack, n, {
      name: 'rates',
      valueConverter: 'protobuf',
      store: { name: 'rates', typed: true },
    });
    expect(await columnTypes(stack.client, n.keyspace, 'rates_g1')).toEqual({
      key: 'blob',
      valid_from: 'bigint',
      value: 'blob',
      writer: 'text',
      currency: 'text',
      rate: 'double',
      ts_ms: 'bigint',
      kind: 'text',
    });
    const id2 = (await registry.register({ type: SchemaType.PROTOBUF, schema: v2 }, { subject })).id;
    const rate2 = parse(v2).root.lookupType('adjunct.typed.Rate');
    await producer.send({
      topic: n.topic,
      messages: [
        {
          key: 'EUR',
          value: protobufRecord(id2, [1], rate2, { currency: 'EUR', rate: 1.2, tsMs: '9007199254740993', source: 'ecb' }),
          timestamp: '2000',
        },
      ],
    });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    const first = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 1000);
    expect([
      first!.validTo,
      first!.row.get('rate'),
      first!.row.get('kind'),
      first!.row.get('ts_ms').toString(),
      first!.row.get('source'),
    ]).toEqual([2000, 1.1, 'FORWARD', '1000', null]);
    const second = await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 2000);
    expect([second!.row.get('rate'), second!.row.get('kind'), second!.row.get('ts_ms').toString(), second!.row.get('source')]).toEqual([
      1.2,
      'SPOT',
      '9007199254740993',
      'ecb',
    ]);
  });

  it('an incompatible schema change (a field changes type) fails with an error naming the field; compatible records keep flowing', async () => {
    const n = names('typedbad');
    await createTopic(stack.kafka, n.topic, 1);
    await createTopic(stack.kafka, n.dlq, 1);
    const registry = newRegistry();
    const subject = `${n.topic}-value`;
    const v1 = {
      type: 'record',
      name: 'Rate',
      fields: [
        { name: 'currency', type: 'string' },
        { name: 'rate', type: 'double' },
      ],
    };
    const v2 = {
      type: 'record',
      name: 'Rate',
      fields: [
        { name: 'currency', type: 'string' },
        { name: 'rate', type: 'string' },
      ],
    };
    // The subject allows any change (compatibility NONE), as a registry without rules does.
    const id1 = (
      await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v1) }, { subject, compatibility: COMPATIBILITY.NONE })
    ).id;
    const producer = await stack.producer();
    await producer.send({
      topic: n.topic,
      messages: [{ key: 'EUR', value: await registry.encode(id1, { currency: 'EUR', rate: 1.1 }), timestamp: '1000' }],
    });
    await runPipeline(stack, n, {
      name: 'rates',
      valueConverter: 'avro',
      store: { name: 'rates', typed: true },
      errors: { tolerance: 'all', deadLetterQueue: { topic: n.dlq } },
    });
    const id2 = (
      await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(v2) }, { subject, compatibility: COMPATIBILITY.NONE })
    ).id;
    await producer.send({
      topic: n.topic,
      messages: [
        { key: 'EUR', value: await registry.encode(id2, { currency: 'EUR', rate: 'high' }), timestamp: '2000' },
        { key: 'USD', value: await registry.encode(id1, { currency: 'USD', rate: 0.9 }), timestamp: '2000' },
      ],
    });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), n.topic);
    const dlq = await readTopic(stack.kafka, stack.admin, n.dlq);
    expect(dlq).toHaveLength(1);
    const [dead] = dlq;
    expect(dead.headers?.['__connect.errors.offset']?.toString()).toBe('1');
    expect(dead.headers?.['__connect.errors.class.name']?.toString()).toBe('TYPED_COLUMN_INCOMPATIBLE');
    expect(dead.headers?.['__connect.errors.exception.message']?.toString()).toMatch(
      /incompatible schema change for field "rate": column rate of .*rates_g1 is double, but subject .* maps it to text/,
    );
    expect(await columnTypes(stack.client, n.keyspace, 'rates_g1')).toMatchObject({ rate: 'double' });
    expect((await plainAsOf(stack.client, n.keyspace, 'rates', 'USD', 2000))?.row.get('rate')).toBe(0.9);
    expect((await plainAsOf(stack.client, n.keyspace, 'rates', 'EUR', 2000))?.row.get('rate')).toBe(1.1);
    expect(stack.worker!.status().pipelines[0].counts).toMatchObject({ written: 2, deadLettered: 1 });
  });
});
