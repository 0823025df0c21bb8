/**
 * Kafka frozen (SIGSTOP) for ~15 s in the middle of a load: committed offsets do not move, the worker survives and
 * recovers; a kill -9 after the recovery shows nothing below the committed offsets is missing; the final table
 * equals the reference.
 */
import { randomInt } from 'crypto';
import { Client } from 'cassandra-driver';
import { Admin, Kafka } from 'kafkajs';
import { createTopic, newCassandraClient, newKafka } from '../integration/helpers';
import { committedOffsets, connectAdmin, eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker, spawnWorker, WorkerProcess } from '../integration/worker/processes';
import { checkBelowCommitted, expectTableEqualsReference, genRecords, note, pauseService, produceAll, PROFILE, resumeAllServices, sampleCommitted, SIZES, sleep, totalOf, waitOutput, workerDoc } from './lib';

describe(`fault: Kafka paused mid-load (${PROFILE} profile)`, () => {
  let kafka: Kafka;
  let admin: Admin;
  let client: Client;
  const procs: WorkerProcess[] = [];
  beforeAll(async () => {
    kafka = newKafka();
    admin = await connectAdmin(kafka);
    client = await newCassandraClient();
  });
  afterAll(async () => {
    resumeAllServices();
    await Promise.all(procs.map((p) => killWorker(p)));
    await admin.disconnect();
    await client.shutdown();
  });

  it('the worker survives a ~15 s Kafka freeze, never commits past an unwritten record, and loses nothing', async () => {
    const size = SIZES.kafkaPause;
    const n = names('kpause');
    await createTopic(kafka, n.topic, size.partitions);
    const t0 = Date.now();
    const file = writeConfigFile(workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' } }]));
    const group = pipelineGroup(n.group, 'p');
    const w = spawnWorker(file);
    procs.push(w);
    await waitOutput(w, /worker running/);

    const records = genRecords(size.records, size.keys);
    const producer = kafka.producer();
    await producer.connect();
    const batch = Math.ceil(records.length / 40);
    let sent = 0;
    const load = produceAll(producer, n.topic, records, { batch, pauseMs: 1000, onBatch: (s) => (sent = s) });
    await eventually(async () => sent >= records.length / 4 && totalOf(await committedOffsets(admin, group, n.topic)) > 0n, 120_000, 'load under way');

    const before = await committedOffsets(admin, group, n.topic);
    const sampler = sampleCommitted(admin, group, n.topic, 500);
    await pauseService('kafka', size.outageMs);
    const resumedAt = Date.now();
    await sleep(1000);
    await sampler.stop();
    const failedSamples = sampler.samples.filter((s) => s.offsets === null).length;
    note(`kafka pause: committed ${totalOf(before)} before; ${sampler.samples.length} samples, ${failedSamples} failed while paused; produced ${sent}/${records.length}`);
    expect(w.child.exitCode).toBeNull();

    // The same process recovers: commits move again after the resume.
    const afterPause = await eventually(async () => {
      try {
        return await committedOffsets(admin, group, n.topic);
      } catch {
        return undefined;
      }
    }, 60_000, 'admin after resume');
    await eventually(async () => totalOf(await committedOffsets(admin, group, n.topic)) > totalOf(afterPause) || (sent >= records.length && totalOf(afterPause) >= BigInt(records.length)), 180_000, 'commits after the pause');
    note(`recovered ${Date.now() - resumedAt} ms after the resume`);
    expect(w.child.exitCode).toBeNull();

    // Kill -9 at a random moment after the recovery: nothing below the committed offsets may be missing.
    await sleep(randomInt(0, 3000));
    await killWorker(w, 'SIGKILL');
    const below = await checkBelowCommitted(kafka, admin, client, n.topic, group, n.keyspace, 's_g1');
    note(`after kill -9: ${below.checked} records below the committed offsets checked`);
    expect(below.missing).toEqual([]);

    const w2 = spawnWorker(file);
    procs.push(w2);
    await load;
    await producer.disconnect();
    await waitCaughtUp(admin, group, n.topic, 300_000);
    await waitOutput(w2, /worker running/);
    await killWorker(w2, 'SIGTERM');
    expect((await w2.exited).code).toBe(0);

    const diff = await expectTableEqualsReference(kafka, admin, client, n.topic, n.keyspace, 's_g1');
    note(`kafka pause: ${diff.records} records (produced ${records.length}; more = producer retries), ${size.outageMs} ms freeze, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${Date.now() - t0} ms total`);
  });
});
