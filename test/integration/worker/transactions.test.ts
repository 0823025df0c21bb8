/**
 * Transactional changelogs (a Kafka Streams exactly-once changelog, any transactional producer) against the real
 * broker: a partition's log ends with a commit or abort marker, records kafkajs never hands over. The store must still
 * be read to the end offsets captured at start (READY), aborted records must never be written, and a group positioned
 * on a marker must get past it.
 */
import { Client } from 'cassandra-driver';
import { Kafka, logLevel } from 'kafkajs';
import { PipelineStatusTable } from '../../../src/catalog';
import { stackEndpoints } from '../../../tools/devstack/endpoints';
import { createTopic, uniqueName } from '../helpers';
import { committedOffsets, configDoc, endOffsets, eventually, names, pipelineGroup, startWorker, useStack } from './harness';

const recs = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}`, value: JSON.stringify({ i }), timestamp: String(1_000_000 + i) }));

/** Sends each partition's records in one transaction, committed or aborted. */
async function inTransaction(topic: string, partition: number, messages: ReturnType<typeof recs>, commit: boolean) {
  // Quiet: the transaction coordinator's first answers ("loading") are retried by kafkajs.
  const kafka = new Kafka({ clientId: uniqueName('tx'), brokers: stackEndpoints().kafkaBrokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ transactionalId: uniqueName('tx'), idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const tx = await producer.transaction();
    await tx.send({ topic, messages: messages.map((m) => ({ ...m, partition })) });
    await (commit ? tx.commit() : tx.abort());
  } finally {
    await producer.disconnect();
  }
}

async function liveKeys(client: Client, keyspace: string, table: string): Promise<string[]> {
  const rs = await client.execute(`SELECT key, value FROM ${keyspace}.${table}`, [], { fetchSize: 100_000 });
  return rs.rows
    .filter((r) => r.get('value') !== null)
    .map((r) => (r.get('key') as Buffer).toString())
    .sort();
}

describe('transactional changelogs (commit and abort markers at the end of the log)', () => {
  const stack = useStack();

  it('a bootstrap store becomes READY at end offsets that are markers; aborted records are never written', async () => {
    const n = names('txlog');
    await createTopic(stack.kafka, n.topic, 2);
    await inTransaction(n.topic, 0, recs('a', 5), true); // offsets 0..4, commit marker 5
    await inTransaction(n.topic, 1, recs('b', 3), true); // 0..2, marker 3
    await inTransaction(n.topic, 1, recs('x', 2), false); // aborted 4..5, abort marker 6
    // The coordinator writes the markers after commit/abort return; until then the end offset (the last stable offset,
    // read_committed) stays at the open transaction's first record.
    const sorted = async () => [...(await endOffsets(stack.admin, n.topic)).entries()].sort();
    await eventually(async () => (await sorted())[1]?.[1] === 7n, 30_000, 'the abort marker written');
    expect(await sorted()).toEqual([
      [0, 6n],
      [1, 7n],
    ]);
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, bootstrap: true }]),
    );
    const status = new PipelineStatusTable(stack.client, n.keyspace);
    await eventually(async () => (await status.get('p'))?.state === 'READY', 60_000, 'READY past the markers');
    const committed = await committedOffsets(stack.admin, pipelineGroup(n.group, 'p'), n.topic);
    expect(committed.get(0)).toBe(6n);
    expect(committed.get(1)).toBe(7n);
    expect(await liveKeys(stack.client, n.keyspace, 's_g1')).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'b0', 'b1', 'b2']);
    expect(stack.worker.isReady()).toBe(true);
  });

  it('a group positioned on a commit marker (nothing after it to hand over) commits past it and becomes READY', async () => {
    const n = names('txpos');
    await createTopic(stack.kafka, n.topic, 1);
    await inTransaction(n.topic, 0, recs('a', 4), true); // 0..3, marker 4
    await eventually(async () => (await endOffsets(stack.admin, n.topic)).get(0) === 5n, 30_000, 'the commit marker written');
    const group = pipelineGroup(n.group, 'p');
    await stack.admin.setOffsets({ groupId: group, topic: n.topic, partitions: [{ partition: 0, offset: '4' }] });
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, bootstrap: true }]),
    );
    const status = new PipelineStatusTable(stack.client, n.keyspace);
    await eventually(async () => (await status.get('p'))?.state === 'READY', 60_000, 'READY past the marker');
    expect((await committedOffsets(stack.admin, group, n.topic)).get(0)).toBe(5n);
    // Nothing before the group's position was written; what comes next is.
    expect(await liveKeys(stack.client, n.keyspace, 's_g1')).toEqual([]);
    await inTransaction(n.topic, 0, recs('c', 2), true); // 5..6, marker 7
    await eventually(
      async () => (await committedOffsets(stack.admin, group, n.topic)).get(0) === 8n,
      60_000,
      'committed past the next marker',
    );
    expect(await liveKeys(stack.client, n.keyspace, 's_g1')).toEqual(['c0', 'c1']);
  });
});
