/**
 * A worker started while Cassandra does not answer (frozen with SIGSTOP, as a node still starting or restarting): it
 * waits with backoff inside `cassandra.startupTimeout` instead of exiting into a restart loop, then starts, catches up
 * and stores exactly the reference; past the bound it exits with CASSANDRA_UNAVAILABLE naming the cause.
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

/** How long Cassandra stays frozen while the worker starts. */
const FROZEN_MS = 15_000;

describe('fault: Cassandra not answering when the worker starts', () => {
  const stack = useFaultStack();

  /** A topic with records and a worker config for it (`startupTimeout` set when given). */
  async function setUp(prefix: string, records: number, cassandra: Record<string, unknown> = {}) {
    const n = names(prefix);
    await createTopic(stack.kafka, n.topic, 3);
    await produceAll(await stack.producer(), n.topic, genRecords(records, 200));
    const doc = workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: FAULT_RETENTION } }]);
    Object.assign(doc.cassandra as Record<string, unknown>, cassandra);
    return { n, file: writeConfigFile(doc) };
  }

  it('waits for Cassandra, then starts and stores exactly the reference', async () => {
    // A frozen node completes the TCP handshake and then never answers: each attempt lasts the request timeout.
    const { n, file } = await setUp('cdownstart', 3000, { requestTimeout: '3s' });
    let startedWhileFrozen = 0;
    await pauseService('cassandra', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      startedWhileFrozen = Date.now();
      await waitOutput(w, /Cassandra not ready at start-up: retrying/, FROZEN_MS);
      // Still alive and still waiting at the end of the freeze: no exit, no restart loop.
      await new Promise((r) => setTimeout(r, FROZEN_MS - (Date.now() - startedWhileFrozen) - 1000));
      expect(w.child.exitCode).toBeNull();
      expect(w.output()).not.toMatch(/worker running/);
    });
    const w = stack.procs[stack.procs.length - 1];
    await waitOutput(w, /worker running/, 120_000);
    note(`worker running ${Date.now() - startedWhileFrozen} ms after its spawn (Cassandra frozen for ${FROZEN_MS} ms)`);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 180_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');
    note(`table equals the reference: ${diff.actualVersions} versions of ${diff.records} records`);
    expect(w.child.exitCode).toBeNull();
  });

  it('past cassandra.startupTimeout exits 4 (UNAVAILABLE) with CASSANDRA_UNAVAILABLE naming the start-up', async () => {
    // Attempts of 3 s (the request timeout) against a 5 s bound: two attempts, the exit about 6 s after the start.
    const { file } = await setUp('cdowntimeout', 100, { startupTimeout: '5s', requestTimeout: '3s' });
    let exitCode: number | null = null;
    await pauseService('cassandra', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      const t0 = Date.now();
      exitCode = (await exitWithin(w, FROZEN_MS - 500))?.code ?? null;
      note(`worker exited ${exitCode} after ${Date.now() - t0} ms`);
      expect(w.output()).toMatch(/Cassandra not ready at start-up: retrying/);
      expect(w.output()).toMatch(
        /connecting to Cassandra at start-up failed after [2-9] attempts in \d+\.\d s: no Cassandra host answered/,
      );
      // No driver internals (stack traces, module paths) in the log.
      expect(w.output()).not.toMatch(/node_modules|operation-state\.js/);
    });
    expect(exitCode).toBe(4); // UNAVAILABLE
  });

  it('SIGTERM during the wait ends it at once: exit 0, nothing started', async () => {
    const { file } = await setUp('cdownterm', 100, { requestTimeout: '10s' });
    let exitCode: number | null = null;
    await pauseService('cassandra', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      // After start-up (1–2 s) the first attempt is under way, and would last 10 s: stop the worker in its middle.
      await new Promise((r) => setTimeout(r, 4000));
      expect(w.child.exitCode).toBeNull();
      const t0 = Date.now();
      w.child.kill('SIGTERM');
      exitCode = (await exitWithin(w, 5000))?.code ?? null;
      note(`worker exited ${exitCode} ${Date.now() - t0} ms after SIGTERM`);
      expect(w.output()).not.toMatch(/worker running|worker failed/);
    });
    expect(exitCode).toBe(0);
  });
});
