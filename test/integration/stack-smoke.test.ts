/**
 * Smoke test of the local stack: Kafka, Cassandra and the schema registry each work, and work together.
 */
import type { Client } from 'cassandra-driver';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import { SchemaType } from '@kafkajs/confluent-schema-registry';
import { cleanUp, createKeyspace, createTopic, newCassandraClient, newKafka, newRegistry, NO_DUPLICATES, uniqueName } from './helpers';

/** Consumes `count` messages from the start of a topic with a fresh group. */
async function consumeN(kafka: Kafka, topic: string, count: number): Promise<{ key: string | null; value: Buffer | null }[]> {
  const consumer: Consumer = kafka.consumer({ groupId: uniqueName('g'), maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    return await new Promise((resolve, reject) => {
      const got: { key: string | null; value: Buffer | null }[] = [];
      const timer = setTimeout(() => reject(new Error(`only ${got.length}/${count} messages from ${topic}`)), 30000);
      consumer
        .run({
          eachMessage: async ({ message }) => {
            got.push({ key: message.key?.toString() ?? null, value: message.value });
            if (got.length === count) {
              clearTimeout(timer);
              resolve(got);
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
}

describe('local stack', () => {
  let kafka: Kafka;
  let producer: Producer;
  let cassandra: Client;

  beforeAll(async () => {
    kafka = newKafka();
    // Idempotent: a send retried after "not the leader" (a leader settling just after the topic's creation) is not duplicated.
    producer = kafka.producer(NO_DUPLICATES);
    await producer.connect();
    cassandra = await newCassandraClient();
  });

  afterAll(() =>
    cleanUp(
      () => producer?.disconnect(),
      () => cassandra?.shutdown(),
    ),
  );

  test('kafka: produce and consume round trip', async () => {
    const topic = uniqueName('smoke_topic');
    await createTopic(kafka, topic, 3);
    await producer.send({ topic, messages: [1, 2, 3].map((i) => ({ key: `k${i}`, value: `v${i}` })) });
    const got = await consumeN(kafka, topic, 3);
    expect(got.map((m) => `${m.key}=${m.value?.toString()}`).sort()).toEqual(['k1=v1', 'k2=v2', 'k3=v3']);
  });

  test('cassandra: create keyspace and table, write and read', async () => {
    const ks = uniqueName('smoke_ks');
    await createKeyspace(cassandra, ks);
    await cassandra.execute(`CREATE TABLE ${ks}.kv (k text, v bigint, val text, PRIMARY KEY (k, v)) WITH CLUSTERING ORDER BY (v DESC)`);
    for (const v of [1, 2, 3]) {
      await cassandra.execute(`INSERT INTO ${ks}.kv (k, v, val) VALUES (?, ?, ?)`, ['a', v, `val${v}`], { prepare: true });
    }
    const rs = await cassandra.execute(`SELECT v, val FROM ${ks}.kv WHERE k = ? LIMIT 1`, ['a'], { prepare: true });
    expect(rs.first().get('val')).toBe('val3');
    expect(Number(rs.first().get('v'))).toBe(3);
    await cassandra.execute(`DROP KEYSPACE ${ks}`);
  });

  test('registry + kafka: Avro register, encode, produce, consume, decode', async () => {
    const registry = newRegistry();
    const topic = uniqueName('smoke_avro');
    const schema = {
      type: 'record',
      name: 'Order',
      namespace: 'adjunct.smoke',
      fields: [
        { name: 'id', type: 'string' },
        { name: 'amount', type: 'long' },
        { name: 'note', type: ['null', 'string'], default: null },
      ],
    };
    const { id } = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(schema) }, { subject: `${topic}-value` });
    expect(id).toBeGreaterThan(0);
    expect(await registry.getLatestSchemaId(`${topic}-value`)).toBe(id);

    const record = { id: 'o-1', amount: 4200, note: 'first' };
    const encoded = await registry.encode(id, record);
    expect(encoded[0]).toBe(0);
    expect(encoded.readInt32BE(1)).toBe(id);

    await createTopic(kafka, topic, 1);
    await producer.send({ topic, messages: [{ key: 'o-1', value: encoded }] });
    const [msg] = await consumeN(kafka, topic, 1);
    expect(msg.value).not.toBeNull();
    const value = msg.value as Buffer;
    expect(value.readInt32BE(1)).toBe(id);
    const fresh = newRegistry(); // no cache: the schema must come back from the registry by id
    expect(await fresh.decode(value)).toEqual(record);
  });
});
