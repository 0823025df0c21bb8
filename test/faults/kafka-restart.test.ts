/**
 * Kafka frozen (SIGSTOP) for ~15 s in the middle of a load: committed offsets do not move, the worker survives and
 * recovers; a kill -9 after the recovery shows nothing below the committed offsets is missing; the final table
 * equals the reference.
 */
import { randomInt } from 'crypto';
import { committedOffsets, endOffsets, eventually, waitCaughtUp } from '../integration/worker/harness';
import { killWorker } from '../integration/worker/processes';
import {
  checkBelowCommitted,
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
  waitOutput,
} from './lib';

describe(`fault: Kafka paused mid-load (${PROFILE} profile)`, () => {
  const stack = useFaultStack();

  it('the worker survives a ~15 s Kafka freeze, never commits past an unwritten record, and loses nothing', async () => {
    const size = SIZES.kafkaPause;
    const { n, group, file, w, records, load, sent, t0 } = await startWorkerUnderLoad(stack, 'kpause', size);
    const { admin, kafka, client } = stack;

    const before = await committedOffsets(admin, group, n.topic);
    const sampler = sampleCommitted(admin, group, n.topic, 500);
    const frozenAt = Date.now();
    await pauseService('kafka', size.outageMs);
    const resumedAt = Date.now();
    await sleep(1000);
    await sampler.stop();
    const failedSamples = sampler.samples.filter((s) => s.offsets === null).length;
    note(
      `kafka pause: committed ${totalOf(before)} before; ${sampler.samples.length} samples, ${failedSamples} failed while paused; produced ${sent()}/${records.length}`,
    );
    // The freeze was real: no offset read completed while the broker was stopped.
    expect(sampler.samples.filter((smp) => smp.offsets !== null && smp.at > frozenAt + 1000 && smp.at < resumedAt)).toEqual([]);
    expect(w.child.exitCode).toBeNull();

    // The same process recovers: commits move again after the resume.
    const afterPause = await eventually(
      async () => {
        try {
          return await committedOffsets(admin, group, n.topic);
        } catch {
          return undefined;
        }
      },
      60_000,
      'admin after resume',
    );
    await eventually(
      async () =>
        totalOf(await committedOffsets(admin, group, n.topic)) > totalOf(afterPause) ||
        (sent() >= records.length && totalOf(afterPause) >= BigInt(records.length)),
      180_000,
      'commits after the pause',
    ).catch(async (e: Error) => {
      // Which side stalled: the test's producer (nothing new to commit) or the worker (end offsets ahead of commits).
      const at = async (f: () => Promise<Map<number, bigint>>) => f().then((m) => [...m].map(([p, o]) => `${p}:${o}`).join(' '), String);
      const [head, ...rest] = e.message.split('\n');
      e.message = [
        `${head}; produced ${sent()}/${records.length}, committed after the resume ${totalOf(afterPause)}, ` +
          `now end offsets ${await at(() => endOffsets(admin, n.topic))}, committed ${await at(() => committedOffsets(admin, group, n.topic))}`,
        ...rest,
      ].join('\n');
      throw e;
    });
    note(`recovered ${Date.now() - resumedAt} ms after the resume`);
    expect(w.child.exitCode).toBeNull();

    // Kill -9 at a random moment after the recovery: nothing below the committed offsets may be missing.
    await sleep(randomInt(0, 3000));
    await killWorker(w, 'SIGKILL');
    const below = await checkBelowCommitted(kafka, admin, client, n.topic, group, n.keyspace, 's_g1');
    note(`after kill -9: ${below.checked} records below the committed offsets checked`);
    expect(below.checked).toBeGreaterThan(0);
    expect(below.missing).toEqual([]);
    expect(below.streamTimeBehind).toEqual([]);

    const w2 = stack.spawn(file);
    await load;
    await waitCaughtUp(admin, group, n.topic, 300_000);
    await waitOutput(w2, /worker running/);
    await killWorker(w2, 'SIGTERM');
    expect((await w2.exited).code).toBe(0);

    const diff = await expectTableEqualsReference(kafka, admin, client, n.topic, n.keyspace, 's_g1');
    note(
      `kafka pause: ${diff.records} records (produced ${records.length}; more = producer retries), ${size.outageMs} ms freeze, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${diff.notPut} puts beyond grace, ${Date.now() - t0} ms total`,
    );
  });
});
