/** Benchmark plumbing: clients for the local stack, topic creation and produce, keyspaces, committed-offset polling. */
import { Client, types } from 'cassandra-driver';
import { Admin, Kafka, logLevel } from 'kafkajs';
import { stackEndpoints } from '../devstack/endpoints';
import { Dataset } from './dataset';

/** Cassandra contact points of the local stack as host:port. */
export function cassandraContactPoints(): string[] {
  const ep = stackEndpoints();
  return ep.cassandraContactPoints.map((c) => (c.includes(':') ? c : `${c}:${ep.cassandraPort}`));
}

/** A driver client configured like the worker's (token-aware, prepared, 2048 requests per connection). */
export async function benchCassandra(): Promise<Client> {
  const c = new Client({
    contactPoints: cassandraContactPoints(),
    localDataCenter: stackEndpoints().localDataCenter,
    socketOptions: { readTimeout: 12_000, connectTimeout: 5000 },
    pooling: { maxRequestsPerConnection: 2048 },
    queryOptions: { prepare: true, consistency: types.consistencies.localQuorum },
  });
  await c.connect();
  return c;
}

/** A kafkajs client for the local stack (errors only). */
export function benchKafka(clientId: string): Kafka {
  return new Kafka({ clientId, brokers: stackEndpoints().kafkaBrokers, logLevel: logLevel.ERROR });
}

/** Creates a keyspace with RF 1 (SimpleStrategy), like the worker's default. */
export async function createKeyspace(c: Client, ks: string): Promise<void> {
  await c.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
}

/** Drops a keyspace (best effort). */
export async function dropKeyspace(c: Client, ks: string): Promise<void> {
  await c.execute(`DROP KEYSPACE IF EXISTS ${ks}`, [], { readTimeout: 60_000 }).catch(() => undefined);
}

/** Creates a topic with `partitions` partitions (RF 1) and waits for leaders. */
export async function createTopic(admin: Admin, topic: string, partitions: number): Promise<void> {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
}

/** Produces the data set in big batches (each key to its fixed partition, record timestamp = version timestamp). */
export async function produceDataset(kafka: Kafka, topic: string, d: Dataset, onProgress?: (done: number) => void): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const chunk = 20_000;
    for (let start = 0; start < d.size; start += chunk) {
      const end = Math.min(d.size, start + chunk);
      const messages = [];
      for (let i = start; i < end; i++) {
        const k = d.keyIdx[i];
        messages.push({ key: d.keyBytes[k], value: d.values[i], partition: d.keyPartition[k], timestamp: String(d.ts[i]) });
      }
      await producer.send({ topic, messages, acks: 1 });
      onProgress?.(end);
    }
  } finally {
    await producer.disconnect();
  }
}

/** End offsets of a topic by partition. */
export async function endOffsets(admin: Admin, topic: string): Promise<Map<number, bigint>> {
  const offs = await admin.fetchTopicOffsets(topic);
  return new Map(offs.map((o) => [o.partition, BigInt(o.high)]));
}

/** True when the group's committed offsets reached `end` on every non-empty partition. */
export async function caughtUp(admin: Admin, groupId: string, topic: string, end: Map<number, bigint>): Promise<boolean> {
  const r = await admin.fetchOffsets({ groupId, topics: [topic] });
  const committed = new Map(r[0].partitions.map((p) => [p.partition, BigInt(p.offset)]));
  return [...end].every(([p, e]) => e === 0n || (committed.get(p) ?? -1n) >= e);
}

/** A short random id for names of one run. */
export function runId(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}
