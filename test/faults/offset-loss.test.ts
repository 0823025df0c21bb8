/**
 * Offsets deleted by retention before the pipeline read them (deleteTopicRecords moves the log start past the
 * group's position), for each onOffsetOutOfRange policy, both at start (committed position older than the log start)
 * and at run time (deleted under a paused pipeline; on resume kafkajs resets the fetch to the earliest offset and
 * commits that reset). fail: FAILED naming topic/partition and the lost range, the group's committed offset stays
 * the pre-gap one, and a restart fails again; latest: logged and counted, the pipeline goes on from the log start;
 * reload: a new generation is built from what the log still holds.
 */
import { Kafka } from 'kafkajs';
import { createTopic } from '../integration/helpers';
import { committedOffsets, configDoc, eventually, names, pipelineGroup, startWorker, waitCaughtUp } from '../integration/worker/harness';
import { note, useFaultStack } from './lib';

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

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, j) => from + j);

describe('fault: offsets deleted by retention before the pipeline read them', () => {
  const stack = useFaultStack();

  const storedKeys = async (keyspace: string, table: string) =>
    (await stack.client.execute(`SELECT key FROM ${keyspace}.${table}`)).rows
      .map((r) => Number(r.get('key').toString().slice(1)))
      .sort((a, b) => a - b);

  const lostMetric = async (topic: string) => {
    const text = await stack.worker!.metrics.registry.metrics();
    const m = text.match(new RegExp(`adjunct_offsets_lost_total\\{pipeline="p",topic="${topic}",partition="0"\\} (\\d+)`));
    return m ? Number(m[1]) : 0;
  };

  /** A topic, a pipeline with `policy` and its consumer group; `start` starts a worker on it. */
  async function setUp(policy: Policy, tag: string) {
    const n = names(`oor${tag}${policy}`);
    await createTopic(stack.kafka, n.topic, 1);
    const doc = configDoc(n.keyspace, n.group, [
      { name: 'p', topics: [n.topic], store: { name: 's', historyRetention: '7d' }, onOffsetOutOfRange: policy },
    ]);
    const group = pipelineGroup(n.group, 'p');
    const start = async () => (stack.worker = await startWorker(doc));
    const committed = async () => (await committedOffsets(stack.admin, group, n.topic)).get(0);
    return { n, group, start, committed };
  }

  /** 100 records stored and committed by a first worker, stopped; 100 more produced; offsets 0..149 deleted. */
  async function loseBeforeStart(policy: Policy) {
    const s = await setUp(policy, 's');
    await send(stack.kafka, s.n.topic, 0, 100);
    await s.start();
    await waitCaughtUp(stack.admin, s.group, s.n.topic);
    await stack.worker!.stop();
    stack.worker = undefined;
    await send(stack.kafka, s.n.topic, 100, 200);
    await stack.admin.deleteTopicRecords({ topic: s.n.topic, partitions: [{ partition: 0, offset: '150' }] });
    note(`${policy} at start: 100 records stored, worker stopped, 100 more produced, offsets 0..149 deleted, restarting`);
    return s;
  }

  /**
   * 100 records stored and committed; paused; 100 more produced; offsets 0..deleteUpTo-1 deleted (150: a gap before
   * records still in the log; 200: the log emptied, no batch comes after the gap); resumed.
   */
  async function loseAtRunTime(policy: Policy, deleteUpTo = 150) {
    const s = await setUp(policy, `r${deleteUpTo}`);
    await send(stack.kafka, s.n.topic, 0, 100);
    const worker = await s.start();
    await waitCaughtUp(stack.admin, s.group, s.n.topic);
    const runner = worker.runner('p');
    await runner.pause();
    await send(stack.kafka, s.n.topic, 100, 200);
    await stack.admin.deleteTopicRecords({ topic: s.n.topic, partitions: [{ partition: 0, offset: String(deleteUpTo) }] });
    await runner.resume();
    note(`${policy} at run time: 100 records stored, paused, 100 more produced, offsets 0..${deleteUpTo - 1} deleted, resumed`);
    return { ...s, runner, worker };
  }

  describe('at start (committed position older than the log start)', () => {
    it('policy fail: the worker does not start; OFFSET_OUT_OF_RANGE names topic/partition and the lost range; the group stays', async () => {
      const s = await loseBeforeStart('fail');
      await expect(s.start()).rejects.toMatchObject({
        code: 'OFFSET_OUT_OF_RANGE',
        message: expect.stringContaining(`${s.n.topic}/0 offsets 100..149 (50 records)`),
      });
      expect(await s.committed()).toBe(100n);
      expect((await storedKeys(s.n.keyspace, 's_g1')).length).toBe(100);
    });

    it('policy latest: continues from the log start (not the end), the 50 lost offsets counted in status and metric', async () => {
      const s = await loseBeforeStart('latest');
      const worker = await s.start();
      await waitCaughtUp(stack.admin, s.group, s.n.topic);
      expect(worker.status().pipelines[0].counts.lostOffsets).toBe(50);
      expect(await lostMetric(s.n.topic)).toBe(50);
      expect(await storedKeys(s.n.keyspace, 's_g1')).toEqual([...range(0, 100), ...range(150, 200)]);
    });

    it('policy reload: a new generation is built from what the log still holds and becomes current', async () => {
      const s = await loseBeforeStart('reload');
      const worker = await s.start();
      await eventually(async () => worker.runner('p').status().generation === 2, 120_000, 'generation 2 current');
      expect(worker.state).toBe('RUNNING');
      expect(await storedKeys(s.n.keyspace, 's_g2')).toEqual(range(150, 200));
    });
  });

  describe('at run time (deleted under a paused pipeline)', () => {
    it('policy fail: FAILED with OFFSET_OUT_OF_RANGE naming the lost range; the group stays at its position', async () => {
      const { n, worker, committed } = await loseAtRunTime('fail');
      await eventually(async () => worker.state === 'FAILED', 60_000, 'worker FAILED');
      expect(worker.lastError?.code).toBe('OFFSET_OUT_OF_RANGE');
      expect(worker.lastError?.message).toContain(`${n.topic}/0 offsets 100..149 (50 records)`);
      expect(await committed()).toBe(100n);
      await worker.stop();
      expect(await committed()).toBe(100n);
      expect((await storedKeys(n.keyspace, 's_g1')).length).toBe(100);
    });

    it("policy fail with no durable write in this run: kafkajs's reset commit is undone, and a restarted worker fails again with the same range", async () => {
      const s = await setUp('fail', 'n');
      await send(stack.kafka, s.n.topic, 0, 100);
      await s.start();
      await waitCaughtUp(stack.admin, s.group, s.n.topic);
      await stack.worker!.stop();
      // A second worker starts at the committed end (nothing to read yet: no batch, no durable write), then pauses.
      const worker = await s.start();
      const runner = worker.runner('p');
      await runner.pause();
      await send(stack.kafka, s.n.topic, 100, 200);
      await stack.admin.deleteTopicRecords({ topic: s.n.topic, partitions: [{ partition: 0, offset: '150' }] });
      await runner.resume();
      note('fail, no durable write in this run: restarted at 100, paused, 100 more produced, offsets 0..149 deleted, resumed');
      await eventually(async () => worker.state === 'FAILED', 60_000, 'worker FAILED');
      expect(worker.lastError?.message).toContain(`${s.n.topic}/0 offsets 100..149 (50 records)`);
      expect(await s.committed()).toBe(100n);
      await worker.stop();
      stack.worker = undefined;
      expect(await s.committed()).toBe(100n);
      await expect(s.start()).rejects.toMatchObject({
        code: 'OFFSET_OUT_OF_RANGE',
        message: expect.stringContaining(`${s.n.topic}/0 offsets 100..149 (50 records)`),
      });
      expect(await s.committed()).toBe(100n);
      expect((await storedKeys(s.n.keyspace, 's_g1')).length).toBe(100);
    });

    it('policy latest: the gap is logged and counted (status, metric) and the pipeline goes on from the log start', async () => {
      const { n, group, worker } = await loseAtRunTime('latest');
      await waitCaughtUp(stack.admin, group, n.topic);
      const st = worker.status().pipelines[0];
      expect(st.state).toBe('RUNNING');
      expect(st.counts.lostOffsets).toBe(50);
      expect(await lostMetric(n.topic)).toBe(50);
      expect(await storedKeys(n.keyspace, 's_g1')).toEqual([...range(0, 100), ...range(150, 200)]);
    });

    it('policy reload: a new generation is built from what the log still holds and becomes current', async () => {
      const { n, runner, worker } = await loseAtRunTime('reload');
      await eventually(async () => runner.status().generation === 2, 120_000, 'generation 2 current');
      expect(worker.state).toBe('RUNNING');
      expect(await storedKeys(n.keyspace, 's_g2')).toEqual(range(150, 200));
    });
  });

  describe('at run time, the log emptied past the position (no batch comes to show the gap)', () => {
    it('policy fail: the progress watchdog sees the log start past the position; FAILED naming 100..199, the group stays at 100', async () => {
      const { n, worker, committed } = await loseAtRunTime('fail', 200);
      await eventually(async () => worker.state === 'FAILED', 60_000, 'worker FAILED');
      expect(worker.lastError?.code).toBe('OFFSET_OUT_OF_RANGE');
      expect(worker.lastError?.message).toContain(`${n.topic}/0 offsets 100..199 (100 records)`);
      await worker.stop();
      stack.worker = undefined;
      expect(await committed()).toBe(100n);
      expect((await storedKeys(n.keyspace, 's_g1')).length).toBe(100);
    });

    it('policy latest: the 100 lost offsets are counted once (status, metric) and records produced later are stored', async () => {
      const { n, group, worker } = await loseAtRunTime('latest', 200);
      await eventually(async () => worker.status().pipelines[0].counts.lostOffsets === 100, 60_000, '100 lost offsets counted');
      expect(await lostMetric(n.topic)).toBe(100);
      await send(stack.kafka, n.topic, 200, 210);
      await waitCaughtUp(stack.admin, group, n.topic);
      const st = worker.status().pipelines[0];
      expect(st.state).toBe('RUNNING');
      expect(st.counts.lostOffsets).toBe(100);
      expect(await storedKeys(n.keyspace, 's_g1')).toEqual([...range(0, 100), ...range(200, 210)]);
    });
  });
});
