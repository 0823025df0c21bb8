/**
 * One Cassandra node of three killed with kill -9 under load, keyspace RF=3, the worker at LOCAL_QUORUM: commits keep
 * moving while the node is dead (the driver routes around it), the worker never stops, and the table, read at
 * LOCAL_QUORUM with the node still dead and again at ALL after it is back, equals the MemoryVersionedStore reference.
 */
import { killWorker } from '../../integration/worker/processes';
import { checkBelowCommitted, expectTableEqualsReference, note, PROFILE, useFaultStack } from '../lib';
import { killNodeUnderLoad, restoreAndFinish } from './kill-under-load';
import { clientAt, expectRingStack, useRingRestore } from './ring';

const SIZE = { records: PROFILE === 'full' ? 80_000 : 20_000, keys: 500, partitions: 6 };
/** The seed and first contact point: the driver's control connection most likely sits on it. */
const VICTIM = 'cassandra-1';

describe(`multi-node fault: a Cassandra node killed under load at LOCAL_QUORUM (${PROFILE} profile)`, () => {
  const stack = useFaultStack();
  useRingRestore();

  it('writes continue on the two remaining replicas, nothing is lost, and the node rejoins', async () => {
    expectRingStack();
    // With one replica of three gone LOCAL_QUORUM still has two: the same worker kept committing and finished the
    // whole load while the node stayed dead.
    const run = await killNodeUnderLoad(stack, 'ckill', SIZE, () => VICTIM);
    const { n, group, w, records, t0 } = run;
    const { admin, kafka } = stack;
    const retries = w
      .output()
      .split('\n')
      .filter((l) => /retriable Cassandra failure/.test(l));
    note(
      `caught up ${run.caughtUpAt - run.killedAt} ms after the kill; longest pause between commit advances after the kill: ${run.commitGapMs} ms; retried writes logged: ${retries.length}${retries.length ? `, e.g. ${retries[0].slice(0, 300)}` : ''}`,
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
    await restoreAndFinish(stack, run, 'ring');
    const all = await clientAt('all');
    try {
      const diff = await expectTableEqualsReference(kafka, admin, all, n.topic, n.keyspace, 's_g1');
      note(`ALL after the rejoin: ${diff.expectedVersions} versions expected, ${diff.actualVersions} read; ${Date.now() - t0} ms total`);
    } finally {
      await all.shutdown();
    }
  });
});
