/**
 * Issue 12's third multi-node scenario: three workers over the 3-node Cassandra ring (keyspace RF=3, LOCAL_QUORUM) and
 * 3 KRaft brokers (topic RF=3, min.insync.replicas=2); a reload started on one of them mid-load, another killed -9
 * during the build, then `rollback --to 1` (twice), then the keep time expiring. The current generation equals the
 * in-memory reference (read at LOCAL_QUORUM), the DLQ holds exactly 0 records, no table is dropped while a live worker
 * heartbeats it, no write fails, and every live worker's generation shows in `adjunct status` and `/status`.
 */
import { runGenerationsScenario } from '../../integration/worker/generations-scenario';
import { note, PROFILE, useFaultStack } from '../lib';
import { clientAt, createReplicatedKeyspace, createReplicatedTopic, expectRingStack, ringWorkerDoc, useRingRestore } from './ring';

const SIZE = { records: PROFILE === 'full' ? 80_000 : 20_000, keys: 500, partitions: 6 };

describe(`multi-node fault: coordinated generations on the ring (${PROFILE} profile)`, () => {
  const stack = useFaultStack();
  useRingRestore();

  it('three workers: reload mid-load, kill -9 during the build, rollback, keep time: equal to the reference, 0 dead letters, no drop under a writer', async () => {
    expectRingStack();
    const quorum = await clientAt('localQuorum');
    try {
      const out = await runGenerationsScenario(stack, {
        prefix: 'mgens',
        records: SIZE.records,
        keys: SIZE.keys,
        createTopic: (n) => createReplicatedTopic(stack.admin, n.topic, SIZE.partitions),
        prepareKeyspace: (n) => createReplicatedKeyspace(stack.client, n.keyspace),
        workerDoc: ringWorkerDoc,
        reader: quorum,
      });
      note(`multi-node generations: ${JSON.stringify(out)}`);
    } finally {
      await quorum.shutdown();
    }
  });
});
