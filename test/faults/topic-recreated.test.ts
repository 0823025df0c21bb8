/**
 * A source topic deleted under a running worker, then re-created (an operator resetting a changelog). kafkajs keeps
 * fetching the deleted topic and logs each failure ("does not host this topic-partition") without saying the topic
 * is gone: the worker now says so once (`SOURCE TOPIC MISSING`), keeps running and keeps the store it has. The
 * re-created topic's offsets start below the committed ones: the run-time offset check sees the log end behind the
 * expected offset (topic recreated) and applies onOffsetOutOfRange (default reload): generation 2 is built from the
 * new topic and equals its reference.
 */
import { createTopic } from '../integration/helpers';
import { names, pipelineGroup, waitCaughtUp, writeConfigFile } from '../integration/worker/harness';
import {
  expectTableEquals,
  expectTableEqualsReference,
  FAULT_RETENTION,
  genRecords,
  note,
  produceAll,
  sleep,
  useFaultStack,
  waitOutput,
  workerDoc,
} from './lib';

describe('fault: a source topic deleted under the worker, then re-created', () => {
  const stack = useFaultStack();

  it('names the missing topic once, keeps the store, then rebuilds from the re-created topic', async () => {
    const n = names('trecreate');
    await createTopic(stack.kafka, n.topic, 3);
    await produceAll(await stack.producer(), n.topic, genRecords(2000, 200));
    const doc = workerDoc(n, [
      { name: 'p', topics: [n.topic], topicRefreshInterval: '2s', store: { name: 's', historyRetention: FAULT_RETENTION } },
    ]);
    const w = stack.spawn(writeConfigFile(doc));
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p'), n.topic, 120_000);
    // The store before: it equals the topic's reference (checked against it again once the topic is gone; a row
    // count would race the background clean-up of expired versions, which the reference allows either way).
    const before = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g1');

    await stack.admin.deleteTopics({ topics: [n.topic], timeout: 30_000 });
    await waitOutput(w, /SOURCE TOPIC MISSING/, 30_000);
    await sleep(5000);
    expect((w.output().match(/SOURCE TOPIC MISSING/g) ?? []).length).toBe(1);
    expect(w.child.exitCode).toBeNull();
    await expectTableEquals(stack.client, n.topic, n.keyspace, 's_g1', before.ref); // the store keeps what it has

    await createTopic(stack.kafka, n.topic, 3);
    await produceAll(await stack.producer(), n.topic, genRecords(1500, 100));
    await waitOutput(w, /source topic exists again/, 30_000);
    await waitOutput(w, /reload complete: store switched to the new generation/, 120_000);
    await waitCaughtUp(stack.admin, pipelineGroup(n.group, 'p', 2), n.topic, 120_000);
    const diff = await expectTableEqualsReference(stack.kafka, stack.admin, stack.client, n.topic, n.keyspace, 's_g2');
    note(
      `generation 2 equals the re-created topic's reference: ${diff.actualVersions} versions of ${diff.records} records (g1 had ${before.actualVersions})`,
    );
    expect(w.child.exitCode).toBeNull();
  });
});
