import { Client } from 'cassandra-driver';
import { ensureCatalog, PipelineStatusTable } from '../../../src/catalog';
import { Generations } from '../../../src/generations';
import { createKeyspace, createTopic } from '../helpers';
import {
  committedOffsets,
  configDoc,
  eventually,
  names,
  pipelineGroup,
  recentWorkerLogs,
  startWorker,
  useStack,
  waitCaughtUp,
} from './harness';

const recs = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from }, (_, j) => ({ key: `${prefix}${from + j}`, value: JSON.stringify({ i: from + j }) }));

async function storedKeys(client: Client, keyspace: string, table: string): Promise<Set<string>> {
  const rs = await client.execute(`SELECT key FROM ${keyspace}.${table}`, [], { fetchSize: 100_000 });
  return new Set(rs.rows.map((r) => (r.get('key') as Buffer).toString()));
}

describe('topicPattern: topics created while running are picked up (real Kafka + Cassandra)', () => {
  const stack = useStack();

  it('stores a matching topic created after start from its earliest offset, ignores non-matching ones, loses nothing across the re-subscription and stays READY', async () => {
    const n = names('pattern');
    const [a, b, late] = [`${n.topic}-a`, `${n.topic}-b`, `${n.topic}-c`];
    const nonMatching = [`${n.topic}-x`, `${n.topic}-a-extra`]; // the pattern must match the whole name
    await createTopic(stack.kafka, a, 2);
    const producer = await stack.producer();
    await producer.send({ topic: a, messages: recs('a', 0, 100) });
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        {
          name: 'rates',
          topicPattern: `${n.topic}-[a-c]`,
          topicRefreshInterval: '500ms',
          bootstrap: true,
          store: { name: 'rates', historyRetention: '7d' },
        },
      ]),
    );
    const group = pipelineGroup(n.group, 'rates');
    await eventually(async () => stack.worker!.isReady(), 60_000, 'READY');

    // Records keep arriving on the existing topic while the new topics appear and the pipeline re-subscribes.
    let stop = false;
    let produced = 100;
    const background = (async () => {
      while (!stop) {
        await producer.send({ topic: a, messages: recs('a', produced, produced + 20) });
        produced += 20;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    for (const t of nonMatching) {
      await createTopic(stack.kafka, t, 1);
      await producer.send({ topic: t, messages: recs(`${t}:`, 0, 10) });
    }
    await createTopic(stack.kafka, b, 3);
    await producer.send({ topic: b, messages: recs('b', 0, 50) }); // written before the pipeline knows b: read from earliest
    await eventually(
      async () => (await storedKeys(stack.client, n.keyspace, 'rates_g1')).has('b49'),
      60_000,
      'records of the new topic b stored',
    );
    await createTopic(stack.kafka, late, 1);
    await producer.send({ topic: late, messages: recs('c', 0, 10) });
    await eventually(
      async () => (await storedKeys(stack.client, n.keyspace, 'rates_g1')).has('c9'),
      60_000,
      'records of the new topic c stored',
    );
    await producer.send({ topic: b, messages: recs('b', 50, 60) });
    stop = true;
    await background;

    for (const t of [a, b, late]) await waitCaughtUp(stack.admin, group, t);
    const keys = await storedKeys(stack.client, n.keyspace, 'rates_g1');
    const expected = [...recs('a', 0, produced), ...recs('b', 0, 60), ...recs('c', 0, 10)].map((r) => r.key);
    expect(expected.filter((k) => !keys.has(k))).toEqual([]); // nothing lost across re-subscriptions
    expect([...keys].filter((k) => k.includes(':'))).toEqual([]); // nothing from non-matching topics
    expect(keys.size).toBe(expected.length);
    for (const t of nonMatching) expect([...(await committedOffsets(stack.admin, group, t)).values()]).toEqual([-1n]);

    // A topic appearing later does not un-READY the store: READY was measured on the topics matched at start.
    expect(stack.worker.isReady()).toBe(true);
    expect((await new PipelineStatusTable(stack.client, n.keyspace).get('rates'))?.state).toBe('READY');
  });

  it('a matched topic deleted during the bootstrap leaves the READY measure (with a warning): the store gets READY on the topics left', async () => {
    const n = names('patterndel');
    const [a, b] = [`${n.topic}-a`, `${n.topic}-b`];
    await createTopic(stack.kafka, a, 2);
    await createTopic(stack.kafka, b, 1);
    const producer = await stack.producer();
    await producer.send({ topic: a, messages: recs('a', 0, 100) });
    await producer.send({ topic: b, messages: recs('b', 0, 50) });
    // Paused in the catalog before the worker starts: it starts paused, so the bootstrap cannot finish while b exists.
    await createKeyspace(stack.client, n.keyspace);
    await ensureCatalog(stack.client, n.keyspace);
    await new Generations(stack.client, n.keyspace, 500).setPaused('rates', true);
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        {
          name: 'rates',
          topicPattern: `${n.topic}-[ab]`,
          topicRefreshInterval: '500ms',
          bootstrap: true,
          store: { name: 'rates', historyRetention: '7d' },
        },
      ]),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect({ ready: stack.worker.isReady(), state: stack.worker.status().pipelines[0].state }).toEqual({ ready: false, state: 'PAUSED' });

    // Deleted by another client: the worker's own kafkajs admin still counts b among the topics it refreshes (renewed).
    await stack.admin.deleteTopics({ topics: [b] });
    await eventually(
      async () =>
        recentWorkerLogs(200)
          .split('\n')
          .some((line) => line.includes('leave the READY measure') && line.includes(b)),
      60_000,
      'the deleted topic left the READY measure',
    );
    await stack.worker.runner('rates').resume();
    await eventually(async () => stack.worker!.isReady(), 60_000, 'READY on the topics left');
    expect((await new PipelineStatusTable(stack.client, n.keyspace).get('rates'))?.state).toBe('READY');
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'rates'), a);
    const keys = await storedKeys(stack.client, n.keyspace, 'rates_g1');
    expect(recs('a', 0, 100).filter((r) => !keys.has(r.key))).toEqual([]);
  });

  it('starts with no matching topic (READY at once: nothing to bootstrap) and consumes the first one created', async () => {
    const n = names('pattern0');
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        {
          name: 'later',
          topicPattern: `${n.topic}-.*`,
          topicRefreshInterval: '500ms',
          bootstrap: true,
          store: { name: 'later' },
        },
      ]),
    );
    expect(stack.worker.isReady()).toBe(true);
    expect(stack.worker.status().pipelines[0].partitions).toEqual([]);
    const t = `${n.topic}-first`;
    await createTopic(stack.kafka, t, 1);
    const producer = await stack.producer();
    await producer.send({ topic: t, messages: recs('k', 0, 20) });
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'later'), t);
    expect((await storedKeys(stack.client, n.keyspace, 'later_g1')).size).toBe(20);
  });
});
