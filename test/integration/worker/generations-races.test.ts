/**
 * Catalog changes that land between what a worker read and what it does next, on the real stack (in-process worker;
 * the moment is fixed by wrapping the Generations calls, the statements are the real ones):
 * - a worker starting while a build is in progress, the build cancelled before the worker's start gets to it, begins
 *   no new build (the cancel stands);
 * - a build cancelled between READY and its switch: the switch's compare-and-set is not applied, the build stops and
 *   the worker keeps running (no RELOAD_FAILED).
 */
import { Generations } from '../../../src/generations';
import { createTopic } from '../helpers';
import { configDoc, eventually, names, runPipeline, startWorker, useStack } from './harness';

jest.setTimeout(180_000);

const recs = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ i }), timestamp: String(1_000_000 + i) }));

describe('generation races with the catalog (real Kafka + Cassandra)', () => {
  const stack = useStack();
  afterEach(() => jest.restoreAllMocks());

  it('a worker that saw a build in progress at start begins no new build when that build is cancelled before it joins', async () => {
    const n = names('grace_start');
    await createTopic(stack.kafka, n.topic, 2);
    await (await stack.producer()).send({ topic: n.topic, messages: recs(50) });
    await runPipeline(stack, n, { name: 'p', store: { name: 's' } });
    await stack.worker!.stop();
    stack.worker = undefined;

    const gens = new Generations(stack.client, n.keyspace, 500);
    expect(await gens.begin('s')).toBe(2);
    // The operator cancels the build (rollback to the current generation) just after the starting worker read the catalog.
    const view = Generations.prototype.view;
    let cancelled = false;
    jest.spyOn(Generations.prototype, 'view').mockImplementation(async function (this: Generations, p: string, s: string) {
      const seen = await view.call(this, p, s);
      if (!cancelled && seen.building === 2) {
        cancelled = true;
        await gens.rollbackTo('s', 1, 60_000);
      }
      return seen;
    });
    const doc = configDoc(n.keyspace, n.group, [{ name: 'p', topics: [n.topic], store: { name: 's' } }]);
    (doc.worker as Record<string, unknown>).generationPoll = 300;
    stack.worker = await startWorker(doc);
    expect(cancelled).toBe(true);
    // A few catalog polls later: no build anywhere, no generation number spent.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await gens.catalog.get('s')).toMatchObject({ currentGeneration: 1, buildingGeneration: null, lastGeneration: 2 });
    expect(stack.worker.status()).toMatchObject({ state: 'RUNNING' });
    expect(stack.worker.status().pipelines[0]).toMatchObject({ generation: 1 });
  });

  it('a build cancelled between READY and its switch stops; the worker keeps running on the current generation', async () => {
    const n = names('grace_switch');
    await createTopic(stack.kafka, n.topic, 2);
    await (await stack.producer()).send({ topic: n.topic, messages: recs(50) });
    const worker = await runPipeline(stack, n, { name: 'p', store: { name: 's' } });
    const gens = new Generations(stack.client, n.keyspace, 500);
    const switchTo = Generations.prototype.switchTo;
    let cancelledAt: number | undefined;
    jest.spyOn(Generations.prototype, 'switchTo').mockImplementation(async function (
      this: Generations,
      s: string,
      g: number,
      keep: number,
    ) {
      cancelledAt ??= g;
      await gens.rollbackTo('s', 1, 60_000); // cancels the build in progress
      return switchTo.call(this, s, g, keep);
    });
    expect(await worker.runner('p').reload()).toBe(2);
    await eventually(
      async () => cancelledAt === 2 && worker.status().pipelines[0].building === undefined,
      60_000,
      'the cancelled build to stop',
    );
    expect(worker.status()).toMatchObject({ state: 'RUNNING' });
    expect(worker.status().lastError).toBeUndefined();
    expect(worker.status().pipelines[0]).toMatchObject({ generation: 1 });
    expect(await gens.catalog.get('s')).toMatchObject({ currentGeneration: 1, buildingGeneration: null, lastGeneration: 2 });
  });
});
