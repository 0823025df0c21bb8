/**
 * PipelineTask's pause over a fake consumer that keeps kafkajs's rules (read in kafkajs's consumer/index.js and
 * consumerGroup.js): `run()` creates the consumer group and joins it (GROUP_JOIN) before any fetch, `pause`/`resume`
 * throw while there is no group (before `run`, and from a crash's STOP until the restart), the group keeps the paused
 * topics, and a consumer kafkajs restarts after a crash gets a new group with nothing paused, then joins again.
 */
import { EventEmitter } from 'node:events';
import { AdjunctError } from '../../src/errors';
import { PipelineParts, TaskTarget } from '../../src/sink/pipeline-parts';
import { PipelineTask } from '../../src/sink/pipeline-task';
import { fakeTask } from './fakes';

const EVENTS = {
  GROUP_JOIN: 'consumer.group_join',
  STOP: 'consumer.stop',
  FETCH: 'consumer.fetch',
  START_BATCH_PROCESS: 'consumer.start_batch_process',
  REBALANCING: 'consumer.rebalancing',
  CRASH: 'consumer.crash',
};

/** The parts of a kafkajs consumer PipelineTask uses; `group` is null until `run`, as in kafkajs. */
class FakeConsumer extends EventEmitter {
  readonly events = EVENTS;
  group: { paused: Set<string> } | null = null;
  /** What each join saw paused when it would start fetching. */
  readonly pausedAtJoin: string[][] = [];
  /** The eachBatch handed to `run`. */
  eachBatch?: (b: { batch: { topic: string; partition: number } }) => Promise<void>;

  async connect(): Promise<void> {}
  async subscribe(): Promise<void> {}
  async disconnect(): Promise<void> {}
  async commitOffsets(): Promise<void> {}
  run(o: { eachBatch: FakeConsumer['eachBatch'] }): Promise<void> {
    this.eachBatch = o.eachBatch;
    this.group = { paused: new Set() };
    return Promise.resolve().then(() => this.join());
  }
  pause(tps: { topic: string }[]): void {
    if (!this.group) throw new Error('Consumer group was not initialized, consumer#run must be called first');
    for (const tp of tps) this.group.paused.add(tp.topic);
  }
  resume(tps: { topic: string }[]): void {
    if (!this.group) throw new Error('Consumer group was not initialized, consumer#run must be called first');
    for (const tp of tps) this.group.paused.delete(tp.topic);
  }
  /** A retriable crash: kafkajs stops the consumer (its group gone, STOP) and restarts it later (`restart`). */
  crash(): void {
    this.emit(EVENTS.CRASH, { payload: { error: new Error('fetch failed'), restart: true } });
    this.group = null;
    this.emit(EVENTS.STOP, {});
  }
  /** kafkajs's restart after a crash: a new consumer group (nothing paused), joined again. */
  restart(): void {
    this.group = { paused: new Set() };
    this.join();
  }
  crashAndRestart(): void {
    this.crash();
    this.restart();
  }
  join(): void {
    this.emit(EVENTS.GROUP_JOIN, { payload: { memberAssignment: { t: [0] } } });
    this.pausedAtJoin.push([...this.group!.paused]);
  }
}

function taskOver(consumer: FakeConsumer): PipelineTask {
  return taskWith(consumer).task;
}

/** A task over the fake consumer (no periodic commit or watchdog unless asked for), and its manual clock. */
function taskWith(consumer: FakeConsumer, options: Parameters<typeof fakeTask>[0] = {}) {
  const { parts, clock } = fakeTask({ commitIntervalMs: 3_600_000, progressTimeoutMs: 0, ...options });
  const withKafka: PipelineParts = { ...parts, kafka: { consumer: () => consumer } as unknown as PipelineParts['kafka'] };
  const target: TaskTarget = {
    generation: 1,
    topics: ['t'],
    groupId: 'g',
    writers: { open: async () => Promise.reject(new Error('no records in these tests')) },
    onFatal: () => undefined,
    reload: () => undefined,
  };
  return { task: new PipelineTask(withKafka, target), clock };
}

describe('PipelineTask pause', () => {
  it('a task paused before its start joins with its topics already paused, and reads PAUSED', async () => {
    const consumer = new FakeConsumer();
    const task = taskOver(consumer);
    task.pause();
    await task.start();
    expect(consumer.pausedAtJoin).toEqual([['t']]);
    expect(task.state).toBe('PAUSED');
    task.resume();
    expect([...consumer.group!.paused]).toEqual([]);
    expect(task.state).toBe('RUNNING');
    await task.stop(0);
  });

  it('stays paused when kafkajs restarts its crashed consumer (a new group forgets the pause)', async () => {
    const consumer = new FakeConsumer();
    const task = taskOver(consumer);
    await task.start();
    task.pause();
    expect([...consumer.group!.paused]).toEqual(['t']);
    consumer.crashAndRestart();
    expect(consumer.pausedAtJoin.at(-1)).toEqual(['t']);
    expect(task.state).toBe('PAUSED');
    // Resumed, a later restart leaves it reading.
    task.resume();
    consumer.crashAndRestart();
    expect(consumer.pausedAtJoin.at(-1)).toEqual([]);
    expect(task.state).toBe('RUNNING');
    await task.stop(0);
  });

  it('pause and resume between a crash and the restart by kafkajs (no consumer group) do not throw; the pause holds at the next join', async () => {
    const consumer = new FakeConsumer();
    const task = taskOver(consumer);
    await task.start();
    consumer.crash();
    expect(() => task.pause()).not.toThrow();
    expect(task.state).toBe('PAUSED');
    consumer.restart();
    expect(consumer.pausedAtJoin.at(-1)).toEqual(['t']);
    consumer.crash();
    expect(() => task.resume()).not.toThrow();
    consumer.restart();
    expect(consumer.pausedAtJoin.at(-1)).toEqual([]);
    expect(task.state).toBe('RUNNING');
    await task.stop(0);
  });

  it('a task whose start failed before run stops without touching the consumer group (kafkajs would throw)', async () => {
    const consumer = new FakeConsumer();
    consumer.connect = () => Promise.reject(new Error('broker down'));
    const task = taskOver(consumer);
    await expect(task.start()).rejects.toThrow('broker down');
    await expect(task.stop(0)).resolves.toBeUndefined();
    expect(consumer.group).toBeNull();
  });
});

describe('PipelineTask stopped while it starts', () => {
  /** A consumer whose `gate` step waits until released, counting disconnects and runs. */
  function gated(gate: 'connect' | 'run') {
    const consumer = new FakeConsumer();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const counts = { disconnects: 0, runs: 0 };
    consumer.disconnect = async () => void counts.disconnects++;
    if (gate === 'connect') consumer.connect = () => held;
    const run = consumer.run.bind(consumer);
    consumer.run = (o) => {
      counts.runs++;
      return gate === 'run' ? held.then(() => run(o)) : run(o);
    };
    return { consumer, release, counts };
  }

  it('a stop during the connect wins: no subscribe, no run, no commit timer; the consumer is disconnected after the connect', async () => {
    const { consumer, release, counts } = gated('connect');
    const subscribe = jest.spyOn(consumer, 'subscribe');
    const task = taskOver(consumer);
    const started = task.start();
    await new Promise((r) => setImmediate(r));
    await task.stop(0);
    expect(task.state).toBe('STOPPED');
    release();
    await started;
    expect(subscribe).not.toHaveBeenCalled();
    expect(counts.runs).toBe(0);
    expect(counts.disconnects).toBe(2); // the stop's, and the one after the late connect
    expect(task.state).toBe('STOPPED'); // never set back to RUNNING
  });

  it('a stop during the group join: the consumer that joined after the stop is disconnected again', async () => {
    const { consumer, release, counts } = gated('run');
    const task = taskOver(consumer);
    const started = task.start();
    await new Promise((r) => setImmediate(r));
    expect(counts.runs).toBe(1);
    await task.stop(0);
    const before = counts.disconnects;
    release();
    await started;
    // Disconnected again: at its join (GROUP_JOIN after the stop's disconnect) and when its run returns (kafkajs shares the stop).
    expect(counts.disconnects).toBeGreaterThan(before);
    expect(task.state).toBe('STOPPED');
  });

  it('a stop during the group join lets the join finish within its timeout, then leaves: kafkajs cannot cancel a join, and a member stopped mid-join never leaves the group', async () => {
    const { consumer, release, counts } = gated('run');
    const joinedAt: number[] = [];
    const disconnectedAt: number[] = [];
    let step = 0;
    consumer.on(EVENTS.GROUP_JOIN, () => joinedAt.push(++step));
    consumer.disconnect = async () => {
      counts.disconnects++;
      disconnectedAt.push(++step);
    };
    const task = taskOver(consumer);
    const started = task.start();
    await new Promise((r) => setImmediate(r));
    const stopped = task.stop(60_000);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(counts.disconnects).toBe(0); // still joining: the stop waits
    release();
    await Promise.all([started, stopped]);
    expect(joinedAt).toEqual([1]);
    expect(disconnectedAt).toEqual([2]); // once, after the join: the member leaves the group
    expect(task.state).toBe('STOPPED');
  });

  it('a consumer kafkajs restarts after a crash and that joins after the stop leaves again', async () => {
    const consumer = new FakeConsumer();
    let disconnects = 0;
    consumer.disconnect = async () => void disconnects++;
    const task = taskOver(consumer);
    await task.start();
    consumer.crash(); // kafkajs schedules its restart
    await task.stop(0);
    expect(disconnects).toBe(1);
    consumer.restart(); // the restart's join completes after the stop
    await new Promise((r) => setImmediate(r));
    expect(disconnects).toBe(2);
    expect(task.state).toBe('STOPPED');
  });
});

describe('PipelineTask FAILED (worker.pipelineFailure isolate keeps the worker running)', () => {
  it('stops fetching: its topics are paused, stay paused across a consumer restart, and a resume does not lift it', async () => {
    const consumer = new FakeConsumer();
    const task = taskOver(consumer);
    await task.start();
    expect([...consumer.group!.paused]).toEqual([]);
    task.fail(new AdjunctError('poison record', { code: 'BAD_RECORD', stage: 'extract' }));
    expect(task.state).toBe('FAILED');
    expect([...consumer.group!.paused]).toEqual(['t']);
    consumer.crashAndRestart();
    expect(consumer.pausedAtJoin.at(-1)).toEqual(['t']);
    task.resume();
    expect([...consumer.group!.paused]).toEqual(['t']);
    await task.stop(0);
  });
});

describe('PipelineTask: commits refused to a membership the group dropped, while kafkajs does not re-join', () => {
  it('after a session timeout and a commit interval of refusals the next batch throws the refusal (kafkajs re-joins on it); a join ends it', async () => {
    const consumer = new FakeConsumer();
    const { task, clock } = taskWith(consumer, { sessionTimeoutMs: 10_000 });
    await task.start();
    const unknown = Object.assign(new Error('The coordinator is not aware of this member'), { type: 'UNKNOWN_MEMBER_ID' });
    const inner = task as unknown as { commit(): Promise<void>; periodicCommit(): Promise<void> };
    inner.commit = () => Promise.reject(Object.assign(new Error('KafkaJSNonRetriableError'), { cause: unknown }));
    const batch = { batch: { topic: 't', partition: 0 } };
    /** What a batch's eachBatch threw (undefined when it went through). */
    const thrown = () =>
      consumer.eachBatch!(batch).then(
        () => undefined,
        (e: unknown) => e,
      );
    await inner.periodicCommit();
    clock.advance(10_000);
    await inner.periodicCommit();
    // Grace not over yet: the batch goes to the sink loop.
    expect(await thrown()).not.toBe(unknown);
    clock.advance(3_600_000);
    await inner.periodicCommit();
    expect(await thrown()).toBe(unknown);
    // Asked for once: the next batch goes on.
    expect(await thrown()).not.toBe(unknown);
    await inner.periodicCommit();
    clock.advance(3_700_000);
    consumer.join();
    expect(await thrown()).not.toBe(unknown);
    await task.stop(0);
  });
});
