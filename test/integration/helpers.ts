/**
 * Shared helpers for integration tests against the local stack (Kafka, Cassandra, schema registry).
 */
import { randomBytes, randomInt } from 'crypto';
import { Client } from 'cassandra-driver';
import { Admin, Kafka, KafkaMessage, logLevel, ProducerConfig } from 'kafkajs';
import * as http from 'http';
import * as net from 'net';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { stackEndpoints } from '../../tools/devstack/endpoints';

const RUN_ID = `${Date.now().toString(36).slice(-5)}${randomBytes(2).toString('hex')}`;
let counter = 0;

/**
 * Producer settings under which a retried send never writes a record twice (idempotent, one request in flight). A send
 * right after a topic is created can meet "not the leader for that topic-partition" and be retried whole; without
 * these, the partitions the broker had already written get the records again, and a count of the topic is off.
 */
export const NO_DUPLICATES: ProducerConfig = { idempotent: true, maxInFlightRequests: 1 };

/** A name unique to this test run, lowercase [a-z0-9_] and at most 48 chars (valid for keyspaces, tables, topics, groups). */
export function uniqueName(prefix: string): string {
  const clean =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'n';
  const suffix = `_${RUN_ID}_${(counter++).toString(36)}`;
  const head = /^[a-z]/.test(clean) ? clean : `n_${clean}`;
  return `${head.slice(0, 48 - suffix.length)}${suffix}`;
}

/** A connected cassandra-driver client for the stack, optionally bound to a keyspace. Call shutdown() when done. */
export async function newCassandraClient(keyspace?: string): Promise<Client> {
  const ep = stackEndpoints();
  const client = new Client({
    contactPoints: ep.cassandraContactPoints,
    protocolOptions: { port: ep.cassandraPort },
    localDataCenter: ep.localDataCenter,
    keyspace,
  });
  await client.connect();
  return client;
}

/** Creates (if missing) a SimpleStrategy RF=1 keyspace. */
export async function createKeyspace(client: Client, name: string): Promise<void> {
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${name} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
}

/** A kafkajs client for the stack's broker (errors-only logging). */
export function newKafka(clientId = uniqueName('test_client')): Kafka {
  return new Kafka({ clientId, brokers: stackEndpoints().kafkaBrokers, logLevel: logLevel.ERROR });
}

/** A loopback TCP port free at the time of the call (for a child worker's HTTP API). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Creates a topic (replication factor 1) and waits for its leaders. The wait is ours, not kafkajs's (`waitForLeaders`):
 * kafkajs gives up on the "does not host this topic-partition" a broker answers for a new topic right after it was
 * resumed from a freeze (seen in the fault suite), while the leaders are elected a moment later.
 */
export async function createTopic(kafka: Kafka, name: string, partitions = 1): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: name, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: false });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const led = await admin
        .fetchTopicMetadata({ topics: [name] })
        .then((m) => m.topics[0].partitions.length === partitions && m.topics[0].partitions.every((p) => p.leader >= 0))
        .catch(() => false);
      if (led) return;
      if (Date.now() > deadline) throw new Error(`topic ${name}: no leader for every partition within 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.disconnect();
  }
}

/** A Confluent-API schema registry client pointed at the stack's registry. */
export function newRegistry(): SchemaRegistry {
  // No keep-alive: a pooled registry socket would keep jest from exiting (the exit check fails such a run).
  return new SchemaRegistry({ host: stackEndpoints().registryUrl, agent: new http.Agent({ keepAlive: false }) });
}

/** A record as read back from Kafka, with its coordinates. */
export interface ReadRecord {
  partition: number;
  offset: bigint;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: number;
  headers: KafkaMessage['headers'];
}

/** Reads a whole topic (every partition up to its current end offset), sorted by partition then offset. */
export async function readTopic(kafka: Kafka, admin: Admin, topic: string, timeoutMs = 180_000): Promise<ReadRecord[]> {
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
  const total = [...ends.values()].reduce((a, b) => a + b, 0n);
  const out: ReadRecord[] = [];
  if (total === 0n) return out;
  const consumer = kafka.consumer({
    groupId: `faults-reader-${topic}-${Date.now()}-${randomInt(1e9)}`,
    maxBytesPerPartition: 4 << 20,
    maxBytes: 16 << 20,
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const seen = new Map<number, bigint>();
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const check = () => {
    if ([...ends].every(([p, e]) => e === 0n || (seen.get(p) ?? -1n) >= e - 1n)) done();
  };
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const o = BigInt(m.offset);
        if (o >= (ends.get(batch.partition) ?? 0n)) continue;
        out.push({
          partition: batch.partition,
          offset: o,
          key: m.key ?? null,
          value: m.value ?? null,
          timestamp: Number(m.timestamp),
          headers: m.headers,
        });
        seen.set(batch.partition, o);
      }
      check();
    },
  });
  const timer = setTimeout(() => done(), timeoutMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  // A consumer may see a record twice around a rebalance: dedupe by coordinates before counting.
  const uniq = new Map<string, ReadRecord>();
  for (const r of out) uniq.set(`${r.partition}:${r.offset}`, r);
  const got = BigInt(uniq.size);
  if (got < total) throw new Error(`read ${got} of ${total} records of ${topic} within ${timeoutMs} ms`);
  return [...uniq.values()].sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
}

/**
 * Runs every clean-up step in order even when an earlier one fails (a DROP KEYSPACE timing out on a loaded node must
 * not leave the client, and its sockets and timers, open: jest would never exit), then rethrows the first failure.
 */
export async function cleanUp(...steps: (() => unknown)[]): Promise<void> {
  let first: unknown;
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      first ??= e;
    }
  }
  if (first !== undefined) throw first;
}
