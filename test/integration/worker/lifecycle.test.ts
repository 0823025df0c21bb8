import { Client } from 'cassandra-driver';
import { createTopic } from '../helpers';
import { committedOffsets, configDoc, eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from './harness';
import { useStack } from './harness';
import { killWorker } from './processes';

/** Every record is a unique (key, timestamp) version, so "nothing lost" is a row count plus a content check. */
function records(from: number, to: number) {
  return Array.from({ length: to - from }, (_, j) => {
    const i = from + j;
    return { key: `k${i % 50}`, value: JSON.stringify({ i }), timestamp: String(1_000_000 + i) };
  });
}

async function versionsInStore(client: Client, keyspace: string): Promise<Set<number>> {
  const rs = await client.execute(`SELECT value FROM ${keyspace}.s_g1`, [], { fetchSize: 50_000 });
  return new Set(rs.rows.map((r) => JSON.parse((r.get('value') as Buffer).toString()).i as number));
}

describe('worker processes: SIGTERM drain, scale-out and a killed worker (real Kafka + Cassandra)', () => {
  const stack = useStack();

  it('SIGTERM: stops fetching, drains in-flight writes, commits and exits 0; offsets never pass an unwritten record', async () => {
    const n = names('sigterm');
    await createTopic(stack.kafka, n.topic, 3);
    const producer = await stack.producer();
    for (let b = 0; b < 10; b++) await producer.send({ topic: n.topic, messages: records(b * 2000, (b + 1) * 2000) });
    const doc = configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' } }], {});
    (doc.worker as Record<string, unknown>).logLevel = 'info';
    const file = writeConfigFile(doc);
    const w = stack.spawn(file);
    const group = pipelineGroup(n.group, 'p');
    await eventually(
      async () => [...(await committedOffsets(stack.admin, group, n.topic)).values()].some((o) => o > 0n),
      120_000,
      'first commit',
    );
    const t0 = Date.now();
    w.child.kill('SIGTERM');
    const exit = await w.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(w.output()).toMatch(/shutdown requested/);
    // Everything below each committed offset is in the store.
    const committed = await committedOffsets(stack.admin, group, n.topic);
    const stored = await versionsInStore(stack.client, n.keyspace);
    const consumer = stack.kafka.consumer({ groupId: `${n.group}-verify` });
    await consumer.connect();
    await consumer.subscribe({ topics: [n.topic], fromBeginning: true });
    let checked = 0;
    let missing = 0;
    const totalBelow = [...committed.values()].reduce((a, o) => a + Number(o > 0n ? o : 0n), 0);
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        if (BigInt(message.offset) < (committed.get(partition) ?? 0n)) {
          checked++;
          if (!stored.has(JSON.parse(message.value!.toString()).i)) missing++;
        }
      },
    });
    await eventually(async () => checked >= totalBelow, 180_000, 'verification scan');
    await consumer.disconnect();
    expect(missing).toBe(0);
    expect(checked).toBeGreaterThan(0);
    // A restarted worker finishes the rest: nothing lost.
    const w2 = stack.spawn(file);
    await waitCaughtUp(stack.admin, group, n.topic, 120_000);
    // A hang-up drains and exits 0 as SIGTERM does (Node's default would end the process at once). The group may be
    // caught up before w2 has even loaded (the first worker's drain committed everything): wait until it runs.
    await eventually(async () => /worker running/.test(w2.output()), 60_000, 'second worker running');
    w2.child.kill('SIGHUP');
    expect(await w2.exited).toEqual({ code: 0, signal: null });
    expect(w2.output()).toMatch(/"signal":"SIGHUP","msg":"shutdown requested/);
    expect((await versionsInStore(stack.client, n.keyspace)).size).toBe(20_000);
  });

  it('two workers share the partitions; one is killed -9 mid-load and the other completes with nothing lost', async () => {
    const n = names('scale');
    await createTopic(stack.kafka, n.topic, 4);
    const file = writeConfigFile(
      configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' } }], {}),
    );
    const a = stack.spawn(file);
    const b = stack.spawn(file);
    const producer = await stack.producer();
    const group = pipelineGroup(n.group, 'p');
    // Both members joined: the group has two members with partitions.
    await eventually(
      async () => {
        const d = await stack.admin.describeGroups([group]);
        return d.groups[0]?.members.length === 2;
      },
      60_000,
      'two group members',
    );
    for (let i = 0; i < 5; i++) await producer.send({ topic: n.topic, messages: records(i * 2000, (i + 1) * 2000) });
    await killWorker(a, 'SIGKILL');
    for (let i = 5; i < 10; i++) await producer.send({ topic: n.topic, messages: records(i * 2000, (i + 1) * 2000) });
    await waitCaughtUp(stack.admin, group, n.topic, 120_000);
    const stored = await versionsInStore(stack.client, n.keyspace);
    expect(stored.size).toBe(20_000);
    await killWorker(b, 'SIGTERM');
    expect((await b.exited).code).toBe(0);
  });
});
