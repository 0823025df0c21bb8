/**
 * One Cassandra node of three killed with kill -9 under load, keyspace RF=3, the worker at LOCAL_QUORUM: commits keep
 * moving while the node is dead (the driver routes around it), the worker never stops, and the table, read at
 * LOCAL_QUORUM with the node still dead and again at ALL after it is back, equals the MemoryVersionedStore reference.
 */
import { committedOffsets, eventually, waitCaughtUp } from '../../integration/worker/harness';
import { killWorker } from '../../integration/worker/processes';
import { useStack } from '../../integration/worker/harness';
import { checkBelowCommitted, expectTableEqualsReference, note, PROFILE, sampleCommitted, totalOf, waitOutput } from '../lib';
import {
  clientAt,
  expectRingStack,
  killNode,
  longestCommitGap,
  nodeRunning,
  restoreStack,
  startRingWorkerUnderLoad,
  useRingRestore,
} from './ring';

const SIZE = { records: PROFILE === 'full' ? 80_000 : 20_000, keys: 500, partitions: 6 };
/** The seed and first contact point: the driver's control connection most likely sits on it. */
const VICTIM = 'cassandra-1';

describe(`multi-node fault: a Cassandra node killed under load at LOCAL_QUORUM (${PROFILE} profile)`, () => {
  const stack = useStack();
  useRingRestore();

  it('writes continue on the two remaining replicas, nothing is lost, and the node rejoins', async () => {
    expectRingStack();
    const { n, group, file, w, records, load, sent, t0 } = await startRingWorkerUnderLoad(stack, 'ckill', SIZE);
    const { admin, kafka } = stack;
    const sampler = sampleCommitted(admin, group, n.topic, 250);

    const atKill = totalOf(await committedOffsets(admin, group, n.topic));
    const killedAt = Date.now();
    await killNode(VICTIM);
    note(`killed ${VICTIM} with ${atKill} committed, ${sent()}/${records.length} produced`);

    // With one replica of three gone LOCAL_QUORUM still has two: the same worker keeps committing and finishes the
    // whole load while the node stays dead.
    await eventually(async () => totalOf(await committedOffsets(admin, group, n.topic)) > atKill, 180_000, 'commits after the kill');
    await load;
    await waitCaughtUp(admin, group, n.topic, 300_000);
    const caughtUpAt = Date.now();
    await sampler.stop();
    expect(nodeRunning(VICTIM)).toBe(false);
    expect(w.child.exitCode).toBeNull();
    const retries = w
      .output()
      .split('\n')
      .filter((l) => /retriable Cassandra failure/.test(l));
    note(
      `caught up ${caughtUpAt - killedAt} ms after the kill; longest pause between commit advances after the kill: ${longestCommitGap(sampler.samples, killedAt, caughtUpAt)} ms; retried writes logged: ${retries.length}${retries.length ? `, e.g. ${retries[0].slice(0, 300)}` : ''}`,
    );

    // A kill -9 of the worker: every record below the committed offsets is readable at LOCAL_QUORUM from the two live replicas.
    await killWorker(w, 'SIGKILL');
    const quorum = await clientAt('localQuorum');
    try {
      const below = await checkBelowCommitted(kafka, admin, quorum, n.topic, group, n.keyspace, 's_g1');
      // Caught up: every record the versioned rules keep (late puts beyond grace are not) is below the committed offsets.
      expect(below.checked).toBe(below.kept);
      expect(below.kept).toBeGreaterThan(records.length * 0.9);
      expect(below.missing).toEqual([]);
      // Stream time did not fall behind: each writer's persisted stream time is at least the reference's as of its committed offset.
      expect(below.streamTimeBehind).toEqual([]);
      const diff = await expectTableEqualsReference(kafka, admin, quorum, n.topic, n.keyspace, 's_g1');
      note(
        `LOCAL_QUORUM with ${VICTIM} dead: ${diff.records} records, ${diff.expectedVersions} versions expected, ${diff.actualVersions} read`,
      );
    } finally {
      await quorum.shutdown();
    }

    // The node comes back (hints replay to it); a restarted worker has nothing left to do; reads at ALL agree.
    note(`restarted the ring in ${await restoreStack()} ms`);
    expect(nodeRunning(VICTIM)).toBe(true);
    const w2 = stack.spawn(file);
    await waitOutput(w2, /worker running/);
    await waitCaughtUp(admin, group, n.topic, 120_000);
    await killWorker(w2, 'SIGTERM');
    expect((await w2.exited).code).toBe(0);
    const all = await clientAt('all');
    try {
      const diff = await expectTableEqualsReference(kafka, admin, all, n.topic, n.keyspace, 's_g1');
      note(`ALL after the rejoin: ${diff.expectedVersions} versions expected, ${diff.actualVersions} read; ${Date.now() - t0} ms total`);
    } finally {
      await all.shutdown();
    }
  });
});
