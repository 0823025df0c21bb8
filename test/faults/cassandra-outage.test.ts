/**
 * Cassandra frozen (SIGSTOP) for ~20 s in the middle of a load: committed offsets do not move while no write can be
 * durable, the same worker process retries and recovers, and the final table equals the reference.
 */
import { committedOffsets, eventually, waitCaughtUp } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import {
  expectTableEqualsReference,
  note,
  pauseService,
  PROFILE,
  sampleCommitted,
  SIZES,
  sleep,
  startWorkerUnderLoad,
  totalOf,
  useFaultStack,
} from './lib';

describe(`fault: Cassandra outage mid-load (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  it('the worker retries through a ~20 s Cassandra freeze, commits nothing unwritten meanwhile, and loses nothing', async () => {
    const size = SIZES.cassandraOutage;
    // The load: ~40 s of steady production, so the outage falls in its middle.
    const { n, group, w, records, load, sent, t0 } = await startWorkerUnderLoad(stack, 'cassout', size, {
      errors: { retryTimeout: '5m', retryMaxDelay: '2s' },
    });
    const { admin, kafka, client } = stack;

    const sampler = sampleCommitted(admin, group, n.topic, 500);
    let frozenAt = 0;
    let stableFrom = 0;
    await pauseService('cassandra', size.outageMs, async () => {
      frozenAt = Date.now();
      // Writes acknowledged just before the freeze may still be committed in the next commit interval(s).
      await sleep(3000);
      stableFrom = Date.now();
    });
    const resumedAt = Date.now();
    const during = sampler.samples.filter((s) => s.at >= stableFrom && s.at < resumedAt && s.offsets !== null);
    const atFreeze = during[0]?.offsets;
    note(
      `outage: ${during.length} samples while frozen, committed ${atFreeze ? totalOf(atFreeze) : '?'}; produced ${sent()}/${records.length}`,
    );
    expect(during.length).toBeGreaterThan(10);
    const moved = during.filter((s) => [...s.offsets!].some(([p, o]) => o !== atFreeze!.get(p)));
    expect(moved.map((s) => `${s.at - frozenAt} ms: ${totalOf(s.offsets!)}`)).toEqual([]);
    expect(w.child.exitCode).toBeNull();

    // The same process recovers: commits move again.
    await eventually(
      async () => totalOf(await committedOffsets(admin, group, n.topic)) > totalOf(atFreeze!),
      120_000,
      'commits after the outage',
    );
    note(`recovered ${Date.now() - resumedAt} ms after the resume`);
    await load;
    await sampler.stop();
    await waitCaughtUp(admin, group, n.topic, 300_000);
    expect(w.child.exitCode).toBeNull();
    expect(w.output()).toMatch(/Cassandra failure: retrying with backoff/);
    await killWorker(w, 'SIGTERM');
    expect((await w.exited).code).toBe(0);

    const diff = await expectTableEqualsReference(kafka, admin, client, n.topic, n.keyspace, 's_g1');
    note(
      `cassandra outage: ${diff.records} records, ${size.outageMs} ms freeze, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${diff.notPut} puts beyond grace, ${Date.now() - t0} ms total`,
    );
  });
});
