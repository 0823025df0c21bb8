/**
 * Cassandra frozen (SIGSTOP) for ~20 s in the middle of a load: committed offsets do not move while no write can be
 * durable, the same worker process retries and recovers, and the final table equals the reference.
 */
import { Client } from 'cassandra-driver';
import { Admin, Kafka } from 'kafkajs';
import { createTopic, newCassandraClient, newKafka } from '../integration/helpers';
import { committedOffsets, connectAdmin, eventually, names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import { killWorker, spawnWorker, WorkerProcess } from '../integration/worker/processes';
import { expectTableEqualsReference, genRecords, note, pauseService, produceAll, PROFILE, resumeAllServices, sampleCommitted, SIZES, sleep, totalOf, waitOutput, workerDoc } from './lib';

describe(`fault: Cassandra outage mid-load (${PROFILE} profile)`, () => {
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

  it('the worker retries through a ~20 s Cassandra freeze, commits nothing unwritten meanwhile, and loses nothing', async () => {
    const size = SIZES.cassandraOutage;
    const n = names('cassout');
    await createTopic(kafka, n.topic, size.partitions);
    const t0 = Date.now();
    const file = writeConfigFile(workerDoc(n, [{ name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, errors: { retryTimeout: '5m', retryMaxDelay: '2s' } }]));
    const group = pipelineGroup(n.group, 'p');
    const w = spawnWorker(file);
    procs.push(w);
    await waitOutput(w, /worker running/);

    // The load: ~40 s of steady production, so the outage falls in its middle.
    const records = genRecords(size.records, size.keys);
    const producer = kafka.producer();
    await producer.connect();
    const batch = Math.ceil(records.length / 40);
    let sent = 0;
    const load = produceAll(producer, n.topic, records, { batch, pauseMs: 1000, onBatch: (s) => (sent = s) });
    await eventually(async () => sent >= records.length / 4 && totalOf(await committedOffsets(admin, group, n.topic)) > 0n, 120_000, 'load under way');

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
    note(`outage: ${during.length} samples while frozen, committed ${atFreeze ? totalOf(atFreeze) : '?'}; produced ${sent}/${records.length}`);
    expect(during.length).toBeGreaterThan(10);
    const moved = during.filter((s) => [...s.offsets!].some(([p, o]) => o !== atFreeze!.get(p)));
    expect(moved.map((s) => `${s.at - frozenAt} ms: ${totalOf(s.offsets!)}`)).toEqual([]);
    expect(w.child.exitCode).toBeNull();

    // The same process recovers: commits move again.
    await eventually(async () => totalOf(await committedOffsets(admin, group, n.topic)) > totalOf(atFreeze!), 120_000, 'commits after the outage');
    note(`recovered ${Date.now() - resumedAt} ms after the resume`);
    await load;
    await producer.disconnect();
    await sampler.stop();
    await waitCaughtUp(admin, group, n.topic, 300_000);
    expect(w.child.exitCode).toBeNull();
    expect(w.output()).toMatch(/retriable Cassandra failure: retrying/);
    await killWorker(w, 'SIGTERM');
    expect((await w.exited).code).toBe(0);

    const diff = await expectTableEqualsReference(kafka, admin, client, n.topic, n.keyspace, 's_g1');
    note(`cassandra outage: ${diff.records} records, ${size.outageMs} ms freeze, ${diff.expectedVersions} versions expected, ${diff.actualVersions} in Cassandra, ${Date.now() - t0} ms total`);
  });
});
