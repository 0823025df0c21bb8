/**
 * One Kafka broker of three killed with kill -9 under load, topic RF=3 with min.insync.replicas=2 and acks=all: leaders
 * move, the worker keeps consuming and committing while the broker is dead, a kill -9 of the worker shows nothing
 * below the committed offsets is missing, and the final table equals the MemoryVersionedStore reference.
 */
import { endOffsets } from '../../integration/worker/harness';
import { killWorker } from '../../integration/worker/processes';
import { checkBelowCommitted, expectTableEqualsReference, note, PROFILE, totalOf, useFaultStack } from '../lib';
import { killNodeUnderLoad, restoreAndFinish } from './kill-under-load';
import { busiestLeader, clientAt, expectRingStack, useRingRestore } from './ring';

const SIZE = { records: PROFILE === 'full' ? 80_000 : 20_000, keys: 500, partitions: 6 };

describe(`multi-node fault: a Kafka broker killed under load (${PROFILE} profile)`, () => {
  const stack = useFaultStack();
  useRingRestore();

  it('leaders move to the surviving replicas, the worker keeps going, and nothing is lost', async () => {
    expectRingStack();
    const run = await killNodeUnderLoad(
      stack,
      'bkill',
      SIZE,
      async (admin, topic) => `kafka-${await busiestLeader(admin, topic)}`,
      'leader of most partitions',
    );
    const { n, group, w, records, t0, victim } = run;
    const { admin, kafka } = stack;
    // Two in-sync replicas remained for every partition: producing (acks=all), consuming and committing all went on.
    const meta = await admin.fetchTopicMetadata({ topics: [n.topic] });
    const deadId = Number(victim.split('-')[1]);
    expect(meta.topics[0].partitions.filter((p) => p.leader === deadId)).toEqual([]);
    note(
      `caught up ${run.caughtUpAt - run.killedAt} ms after the kill; longest pause between commit advances after the kill: ${run.commitGapMs} ms`,
    );

    // kill -9 of the worker with the broker still dead: nothing below the committed offsets is missing.
    await killWorker(w, 'SIGKILL');
    const quorum = await clientAt('localQuorum');
    try {
      // Everything in the topic is below the committed offsets and in the table. (The test's kafkajs producer itself may
      // lose a few acks=all sends across the leader change, kafkajs issue #1303: the topic, not the sent list, is the truth.)
      const inTopic = Number(totalOf(await endOffsets(admin, n.topic)));
      const below = await checkBelowCommitted(kafka, admin, quorum, n.topic, group, n.keyspace, 's_g1');
      note(`produced ${records.length} (acknowledged), ${inTopic} in the topic, ${below.checked} below the committed offsets`);
      expect(below.checked).toBe(below.kept); // every record the versioned rules keep (late puts beyond grace are not)
      expect(below.kept).toBeGreaterThan(inTopic * 0.9);
      expect(below.missing).toEqual([]);
      // Stream time did not fall behind: each writer's persisted stream time is at least the reference's as of its committed offset.
      expect(below.streamTimeBehind).toEqual([]);

      // The broker comes back and catches up; a restarted worker finishes; the table equals the reference.
      await restoreAndFinish(stack, run, 'brokers');
      const diff = await expectTableEqualsReference(kafka, admin, quorum, n.topic, n.keyspace, 's_g1');
      note(
        `broker kill: ${diff.records} records in the topic (produced ${records.length}), ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${Date.now() - t0} ms total`,
      );
    } finally {
      await quorum.shutdown();
    }
  });
});
