/**
 * A worker started while Cassandra does not answer (frozen with SIGSTOP, as a node still starting or restarting): it
 * waits with backoff inside `cassandra.startupTimeout` instead of exiting into a restart loop, then starts, catches up
 * and stores exactly the reference; past the bound it exits with CASSANDRA_UNAVAILABLE naming the cause.
 */
import { createTopic } from '../integration/helpers';
import { eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import {
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
    const { n, file } = await setUp('cdownstart', 3000);
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
    // Each attempt waits out the driver's request timeout (3 s here), so 8 s allows about three.
    const { file } = await setUp('cdowntimeout', 100, { startupTimeout: '8s', requestTimeout: '3s' });
    let exitCode: number | null = null;
    await pauseService('cassandra', FROZEN_MS, async () => {
      const w = stack.spawn(file);
      const t0 = Date.now();
      exitCode = await eventually(async () => w.child.exitCode ?? undefined, FROZEN_MS - 1000, 'worker exit');
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
});
