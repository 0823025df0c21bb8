/**
 * Shared helpers for integration tests against the local stack (Kafka, Cassandra, schema registry).
 */
import { randomBytes } from 'crypto';
import { Client } from 'cassandra-driver';
import { Kafka, logLevel } from 'kafkajs';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { stackEndpoints } from '../../tools/devstack/endpoints';

const RUN_ID = `${Date.now().toString(36).slice(-5)}${randomBytes(2).toString('hex')}`;
let counter = 0;

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

/** Creates a topic (replication factor 1) and waits for its leaders. */
export async function createTopic(kafka: Kafka, name: string, partitions = 1): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: name, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/** A Confluent-API schema registry client pointed at the stack's registry. */
export function newRegistry(): SchemaRegistry {
  return new SchemaRegistry({ host: stackEndpoints().registryUrl });
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
