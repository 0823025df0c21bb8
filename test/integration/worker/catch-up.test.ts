import { Lookup, openLookup } from '../../../src/lookup';
import { createTopic } from '../helpers';
import { configDoc, eventually, names, startWorker, useStack } from './harness';

jest.setTimeout(180_000);

// Samza's bootstrap semantics at every start: a bootstrap pipeline whose generation was READY before is READY on a
// (re)started worker only once its group has committed the end offsets seen at that start, and its dependents start
// then. The generation's persisted READY (what `adjunct serve` and lookup.waitUntilReady read) is never taken back.

describe('a READY store catches up at every start before the worker is ready (real Kafka + Cassandra)', () => {
  const stack = useStack();
  let lookup: Lookup | undefined;
  afterEach(async () => {
    await lookup?.close();
    lookup = undefined;
  });

  it('is CATCHING_UP (not ready, dependents waiting) while records produced during its downtime are unread; READY once read', async () => {
    const n = names('catchup');
    await createTopic(stack.kafka, n.topic, 2);
    const joinTopic = `${n.topic}-orders`;
    await createTopic(stack.kafka, joinTopic, 1);
    const producer = await stack.producer();
    const send = (key: string, v: number, ts: number) =>
      producer.send({ topic: n.topic, messages: [{ key, value: JSON.stringify({ v }), timestamp: String(ts) }] });
    await send('a', 1, 1000);
    await send('b', 1, 1000);
    const doc = configDoc(n.keyspace, n.group, [
      { name: 'rates', topics: [n.topic], store: { name: 'rates' }, bootstrap: true },
      { name: 'orders', topics: [joinTopic], store: { name: 'orders' }, dependsOn: ['rates'] },
    ]);

    // First run: bootstrapped, READY, then paused in the catalog and stopped.
    const first = await startWorker(doc);
    stack.worker = first;
    await eventually(async () => first.isReady(), 60_000, 'first worker ready');
    await first.runner('rates').pause();
    await first.stop();
    stack.worker = undefined;

    // While no worker runs, the changelog moves on.
    await send('a', 2, 2000);
    await send('b', 2, 2000);

    // The second worker starts paused (the catalog says so), so it cannot catch up: it must not say it is ready.
    const second = await startWorker(doc);
    stack.worker = second;
    const rates = () => second.status().pipelines.find((p) => p.name === 'rates')!;
    await eventually(async () => rates().bootstrap?.state === 'CATCHING_UP', 30_000, 'rates CATCHING_UP');
    expect(rates().bootstrap).toMatchObject({ state: 'CATCHING_UP', total: 2 });
    expect(second.isReady()).toBe(false);
    expect(second.runner('orders').state).toBe('CREATED'); // the dependent waits, as at the first bootstrap
    lookup = await openLookup({ client: second.cassandraClient!, keyspace: n.keyspace, generationCacheMs: 0 });
    // The generation's own READY stands for readers in other processes: it was bootstrapped once.
    expect((await lookup.readiness(['rates'])).ready).toBe(true);

    await second.runner('rates').resume();
    await eventually(async () => second.isReady(), 60_000, 'second worker ready after catching up');
    expect(rates().bootstrap?.state).toBe('READY');
    // Ready means caught up: every record produced during the downtime is readable.
    expect((await lookup.store('rates').get('a'))?.value).toEqual({ v: 2 });
    expect((await lookup.store('rates').get('b'))?.value).toEqual({ v: 2 });
    await eventually(async () => second.runner('orders').state === 'RUNNING', 30_000, 'dependent started');
  });
});
