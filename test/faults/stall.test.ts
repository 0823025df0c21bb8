/**
 * errors.tolerance all must not turn an outage into dead letters. Cassandra frozen (SIGSTOP) much longer than a
 * short retryTimeout: the pipeline shows STALLED, dead-letters nothing, commits nothing unwritten, and resumes by
 * itself; every record is stored. The DLQ topic is missing at start and is created with the configured partitions.
 */
import { committedOffsets, eventually, waitCaughtUp } from '../integration/worker/harness';
import { readTopic } from '../integration/helpers';
import { killWorker } from '../integration/worker/processes';
import {
  expectTableEqualsReference,
  note,
  pauseService,
  PROFILE,
  SIZES,
  sleep,
  startWorkerUnderLoad,
  totalOf,
  useFaultStack,
  waitOutput,
} from './lib';

describe(`fault: an outage under tolerance all stalls, never dead-letters (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  it('Cassandra frozen past retryTimeout: STALLED, zero dead letters, every record stored after resume; the missing DLQ topic was created at start', async () => {
    const size = { ...SIZES.cassandraOutage, outageMs: 15_000 };
    const dlq = `dlq-stall-${Date.now()}`;
    expect(await stack.admin.listTopics()).not.toContain(dlq);
    const { n, group, w, load, t0 } = await startWorkerUnderLoad(stack, 'stall', size, {
      errors: {
        tolerance: 'all',
        retryTimeout: '2s',
        retryMaxDelay: '1s',
        deadLetterQueue: { topic: dlq, partitions: 2, replicationFactor: 1 },
      },
    });
    const { admin, kafka, client } = stack;
    const meta = await admin.fetchTopicMetadata({ topics: [dlq] });
    expect(meta.topics[0].partitions).toHaveLength(2);

    // While Cassandra is frozen nothing new becomes durable: the group's committed offsets must not move.
    let atFreeze = new Map<number, bigint>();
    let beforeResume = new Map<number, bigint>();
    const frozenAt = Date.now();
    await pauseService('cassandra', size.outageMs, async () => {
      await sleep(3000); // commits of the writes acknowledged just before the freeze land first
      atFreeze = await committedOffsets(admin, group, n.topic);
      await waitOutput(w, /pipeline STALLED/, size.outageMs);
      await sleep(Math.max(0, size.outageMs - 1000 - (Date.now() - frozenAt)));
      beforeResume = await committedOffsets(admin, group, n.topic);
    });
    expect(totalOf(atFreeze)).toBeGreaterThan(0n);
    expect(Object.fromEntries(beforeResume)).toEqual(Object.fromEntries(atFreeze));
    await waitOutput(w, /pipeline resumed/, 120_000);
    await eventually(
      async () => totalOf(await committedOffsets(admin, group, n.topic)) > totalOf(atFreeze),
      120_000,
      'commits after the outage',
    );
    await load;
    await waitCaughtUp(admin, group, n.topic, 300_000);
    expect(w.child.exitCode).toBeNull();
    expect(await readTopic(kafka, admin, dlq)).toHaveLength(0);
    await killWorker(w, 'SIGTERM');
    expect((await w.exited).code).toBe(0);
    const diff = await expectTableEqualsReference(kafka, admin, client, n.topic, n.keyspace, 's_g1');
    note(
      `stall: ${diff.records} records, ${size.outageMs} ms freeze with retryTimeout 2 s, 0 dead letters, ${diff.actualVersions} versions equal the reference, ${Date.now() - t0} ms total`,
    );
  });
});
