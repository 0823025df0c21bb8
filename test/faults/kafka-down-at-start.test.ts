/**
 * A worker started while Kafka does not answer (the broker frozen with SIGSTOP, as one still starting or restarting):
 * it waits for the broker instead of exiting into a restart loop, then starts and stores exactly the reference; past
 * `kafka.startupTimeout` it exits 4 naming the cause; a SIGTERM during the wait ends it promptly (a container's stop
 * grace is 10 s), with nothing started.
 */
import { createTopic } from '../integration/helpers';
import { names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import {
  exitWithin,
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  pauseService,
  produceAll,
  useFaultStack,
  waitOutput,
  workerDoc,
} from './lib';

/** How long Kafka stays frozen while the worker starts. */
const FROZEN_MS = 15_000;

describe('fault: Kafka not answering when the worker starts', () => {
  const stack = useFaultStack();

  /** A topic with records and a worker config for it (kafka settings merged when given). */
  async function setUp(prefix: string, records: number, kafka: Record<string, unknown> = {}) {
    const n = names(prefix);
    await createTopic(stack.kafka, n.topic, 3);
    await produceAll(await stack.producer(), n.topic, genRecords(records, 200));
    const doc = workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }], kafka);
    return { n, file: writeConfigFile(doc) };
  }

  it('waits for the broker, then starts and stores exactly the reference', async () => {
    const { n, file } = await setUp('kdownstart', 3000, { requestTimeout: '3s', connectionTimeout: '3s' });
    let spawnedAt = 0;
    await pauseService('kafka', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      spawnedAt = Date.now();
      await new Promise((r) => setTimeout(r, FROZEN_MS - 1000));
      expect({ code: w.child.exitCode, out: w.child.exitCode === null ? '' : w.output().slice(-3000) }).toEqual({ code: null, out: '' });
      expect(w.output()).not.toMatch(/worker running/);
    });
    const w = stack.procs[stack.procs.length - 1];
    await waitOutput(w, /worker running/, 120_000);
    note(`worker running ${Date.now() - spawnedAt} ms after its spawn (Kafka frozen for ${FROZEN_MS} ms)`);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 180_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');
    note(`table equals the reference: ${diff.actualVersions} versions of ${diff.records} records`);
    expect(w.child.exitCode).toBeNull();
  });

  it('past kafka.startupTimeout exits 4 (UNAVAILABLE) with KAFKA_UNAVAILABLE naming the start-up', async () => {
    const { file } = await setUp('kdowntimeout', 100, { startupTimeout: '5s', requestTimeout: '3s', connectionTimeout: '3s' });
    let exitCode: number | null = null;
    await pauseService('kafka', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      const t0 = Date.now();
      exitCode = (await exitWithin(w, FROZEN_MS - 500))?.code ?? null;
      note(`worker exited ${exitCode} after ${Date.now() - t0} ms`);
      expect(w.output()).toMatch(/Kafka not ready at start-up: retrying/);
      expect(w.output()).toMatch(/connecting to Kafka at start-up failed after [2-9] attempts in \d+\.\d s: /);
      expect(w.output()).not.toMatch(/node_modules|worker running/);
    });
    expect(exitCode).toBe(4); // UNAVAILABLE
  });

  it('SIGTERM during the wait ends it promptly: exit 0, nothing started', async () => {
    const { file } = await setUp('kdownterm', 100, { requestTimeout: '10s', connectionTimeout: '10s' });
    let exitCode: number | null = null;
    await pauseService('kafka', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      // After start-up (1–2 s) the first request to the frozen broker is under way (10 s): stop the worker in its middle.
      // The admin client's close waits for that request; the stop bounds it (2 s), so the exit comes within ~2.5 s.
      await new Promise((r) => setTimeout(r, 4000));
      expect(w.child.exitCode).toBeNull();
      const t0 = Date.now();
      w.child.kill('SIGTERM');
      exitCode = (await exitWithin(w, 5000))?.code ?? null;
      note(`worker exited ${exitCode} ${Date.now() - t0} ms after SIGTERM`);
      if (exitCode !== 0) note(w.output().slice(-4000));
      expect(w.output()).not.toMatch(/worker running|worker failed/);
    });
    expect(exitCode).toBe(0);
  });
});
