/**
 * Offsets deleted by retention while the pipeline is paused (deleteTopicRecords moves the log start past the pipeline's
 * position): on resume kafkajs resets the fetch to the earliest offset; the worker detects the jump at run time and
 * applies onOffsetOutOfRange. fail: FAILED naming topic/partition and the lost range, group back at its position;
 * latest: logged and counted, the pipeline goes on; reload: a new generation is built from what the log still has.
 */
import { Kafka } from 'kafkajs';
import { createTopic } from '../integration/helpers';
import {
  committedOffsets,
  configDoc,
  eventually,
  names,
  pipelineGroup,
  startWorker,
  useStack,
  waitCaughtUp,
} from '../integration/worker/harness';
import { note } from './lib';

type Policy = 'fail' | 'latest' | 'reload';

async function send(kafka: Kafka, topic: string, from: number, to: number): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const messages = Array.from({ length: to - from }, (_, j) => ({
    key: `k${from + j}`,
    value: JSON.stringify({ i: from + j }),
    timestamp: String(1_700_000_000_000 + from + j),
  }));
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
}

describe('fault: offsets deleted by retention under a paused pipeline', () => {
  const stack = useStack();

  /** 100 records stored and committed; paused; 100 more produced; records below 150 deleted; resumed. */
  async function lose(policy: Policy) {
    const n = names(`oor${policy}`);
    await createTopic(stack.kafka, n.topic, 1);
    await send(stack.kafka, n.topic, 0, 100);
    stack.worker = await startWorker(
      configDoc(n.keyspace, n.group, [
        { name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, onOffsetOutOfRange: policy },
      ]),
    );
    const group = pipelineGroup(n.group, 'p');
    await waitCaughtUp(stack.admin, group, n.topic);
    const runner = stack.worker.runner('p');
    await runner.pause();
    await send(stack.kafka, n.topic, 100, 200);
    await stack.admin.deleteTopicRecords({ topic: n.topic, partitions: [{ partition: 0, offset: '150' }] });
    await runner.resume();
    note(`${policy}: 100 records stored, paused, 100 more produced, offsets 0..149 deleted, resumed`);
    return { n, group, runner, worker: stack.worker };
  }

  const storedKeys = async (keyspace: string, table: string) =>
    (await stack.client.execute(`SELECT key FROM ${keyspace}.${table}`)).rows
      .map((r) => Number(r.get('key').toString().slice(1)))
      .sort((a, b) => a - b);

  it('policy fail: the pipeline stops with OFFSET_OUT_OF_RANGE naming topic/partition and the lost range; the group stays at its position', async () => {
    const { n, group, worker } = await lose('fail');
    await eventually(async () => worker.state === 'FAILED', 60_000, 'worker FAILED');
    expect(worker.lastError?.code).toBe('OFFSET_OUT_OF_RANGE');
    expect(worker.lastError?.message).toContain(`${n.topic}/0 offsets 100..149 (50 records)`);
    await worker.stop();
    expect((await committedOffsets(stack.admin, group, n.topic)).get(0)).toBe(100n);
    expect((await storedKeys(n.keyspace, 's_g1')).length).toBe(100);
  });

  it('policy latest: the gap is logged and counted (status, metric) and the pipeline goes on', async () => {
    const { n, group, worker } = await lose('latest');
    await waitCaughtUp(stack.admin, group, n.topic);
    const st = worker.status().pipelines[0];
    expect(st.state).toBe('RUNNING');
    expect(st.counts.lostOffsets).toBe(50);
    expect(await worker.metrics.registry.metrics()).toMatch(
      new RegExp(`adjunct_offsets_lost_total\\{pipeline="p",topic="${n.topic}",partition="0"\\} 50`),
    );
    const keys = await storedKeys(n.keyspace, 's_g1');
    expect(keys.filter((k) => k >= 100 && k < 150)).toEqual([]);
    expect(keys.length).toBe(150);
  });

  it('policy reload: a new generation is built from what the log still holds and becomes current', async () => {
    const { n, runner, worker } = await lose('reload');
    await eventually(async () => runner.status().generation === 2, 120_000, 'generation 2 current');
    expect(worker.state).toBe('RUNNING');
    expect(await storedKeys(n.keyspace, 's_g2')).toEqual(Array.from({ length: 50 }, (_, j) => 150 + j));
  });
});
