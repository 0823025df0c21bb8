import { PartitionOffsets } from '../../src/bootstrap/topic-offsets';
import { ManualClock } from '../../src/clock';
import { createLogger } from '../../src/observability/logger';
import { BehindLogStart, ProgressWatchdog, StuckPartition } from '../../src/sink/progress-watchdog';

const TIMEOUT = 32_000;

/** A watchdog on fake offsets and a manual clock; `reported` collects what it reported. */
function setup(offsets: PartitionOffsets[]) {
  const clock = new ManualClock();
  const reported: StuckPartition[][] = [];
  const behind: BehindLogStart[][] = [];
  const state = { reading: true, offsets, failOffsets: false, progress: 0, gate: Promise.resolve() };
  const dog = new ProgressWatchdog({
    clock,
    timeoutMs: TIMEOUT,
    offsets: async () => {
      await state.gate;
      if (state.failOffsets) throw new Error('broker down');
      return state.offsets;
    },
    reading: () => state.reading,
    progress: () => state.progress,
    onStuck: (s) => reported.push(s),
    onBehindLogStart: (b) => behind.push(b),
    log: createLogger('silent'),
  });
  return { clock, reported, behind, state, dog };
}

const part = (partition: number, committed: bigint | null, high: bigint, low = 0n): PartitionOffsets => ({
  topic: 't',
  partition,
  low,
  high,
  committed,
});

describe('progress watchdog', () => {
  it('reports an assigned partition with records to read whose position did not move for the timeout, once', async () => {
    const { clock, reported, dog } = setup([part(0, 100n, 500n), part(1, 200n, 200n)]);
    dog.assigned({ t: [0, 1] });
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    const stuck = await dog.check();
    expect(stuck).toEqual([{ topic: 't', partition: 0, position: 100n, highWatermark: 500n, idleMs: TIMEOUT, reason: 'not-reading' }]);
    expect(reported).toEqual([stuck]);
    clock.advance(TIMEOUT);
    expect(await dog.check()).toEqual([]);
    expect(reported).toHaveLength(1);
  });

  it('a fetched batch moves the position; fetched up to the log end, nothing is to read however long nothing comes', async () => {
    const { clock, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    clock.advance(TIMEOUT - 1000);
    dog.fetched('t', 0, '299');
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    dog.fetched('t', 0, '499'); // a trailing control record is fetched too
    clock.advance(10 * TIMEOUT);
    expect(await dog.check()).toEqual([]);
  });

  it('the same batch fetched again and again (the task failing it each time) is no move: stuck after the timeout', async () => {
    const { clock, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    // Nothing settled: the task's position stays 100, kafkajs's stays after the batch.
    for (let i = 0; i < 8; i++) {
      dog.fetched('t', 0, '199');
      dog.batchStarted('t', 0);
      dog.batchEnded('t', 0, 100n);
      clock.advance(TIMEOUT / 8);
      expect(await dog.check()).toEqual([]);
    }
    clock.advance(TIMEOUT / 8);
    expect(await dog.check()).toEqual([
      { topic: 't', partition: 0, position: 200n, highWatermark: 500n, idleMs: TIMEOUT, reason: 'not-reading' },
    ]);
  });

  it('records arriving after a quiet spell get the full timeout from when a check first sees them', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 100n)]);
    dog.assigned({ t: [0] });
    clock.advance(10 * TIMEOUT);
    expect(await dog.check()).toEqual([]);
    state.offsets = [part(0, 100n, 101n)];
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    expect(await dog.check()).toHaveLength(1);
  });

  it('a caught-up partition is never stuck; one behind the log end is, from its committed offset (or the log start)', async () => {
    const { clock, dog } = setup([part(0, 500n, 500n), part(1, null, 50n, 10n)]);
    dog.assigned({ t: [0, 1] });
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT);
    expect(await dog.check()).toEqual([
      { topic: 't', partition: 1, position: 10n, highWatermark: 50n, idleMs: TIMEOUT, reason: 'not-reading' },
    ]);
  });

  it('a batch in progress that gets on with its records is slow, not stuck; one that settles nothing for the timeout is stuck', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n), part(1, 100n, 500n)]);
    dog.assigned({ t: [0] });
    dog.batchStarted('t', 0);
    for (let i = 0; i < 6; i++) {
      clock.advance(TIMEOUT / 2);
      state.progress++;
      expect(await dog.check()).toEqual([]);
    }
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    expect(await dog.check()).toEqual([
      { topic: 't', partition: 0, position: 100n, highWatermark: 500n, idleMs: TIMEOUT, reason: 'batch-not-settling' },
    ]);
  });

  it('a batch fetched up to the log end that settles nothing for the timeout is stuck in the task (kafkajs has nothing left to fetch)', async () => {
    const { clock, state, dog } = setup([part(0, null, 40n)]);
    dog.assigned({ t: [0] });
    dog.fetched('t', 0, '39');
    dog.batchStarted('t', 0);
    clock.advance(TIMEOUT / 2);
    state.progress++; // the batch got on: slow, not stuck
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    expect(await dog.check()).toEqual([
      { topic: 't', partition: 0, position: 40n, highWatermark: 40n, idleMs: TIMEOUT, reason: 'batch-not-settling' },
    ]);
    // Once the batch ends, a partition fetched to the log end is idle, not stuck.
    const other = setup([part(0, null, 40n)]);
    other.dog.assigned({ t: [0] });
    other.dog.fetched('t', 0, '39');
    other.dog.batchStarted('t', 0);
    other.dog.batchEnded('t', 0, 40n);
    other.clock.advance(10 * TIMEOUT);
    expect(await other.dog.check()).toEqual([]);
  });

  it('counts completed fetches and batches in progress; a check never overlaps the one still waiting for Kafka', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    expect(dog.activity()).toEqual({ fetches: 0, lastFetchAt: null, batchesInProgress: 0 });
    clock.advance(5);
    dog.fetchCompleted();
    dog.batchStarted('t', 0);
    expect(dog.activity()).toEqual({ fetches: 1, lastFetchAt: clock.now(), batchesInProgress: 1 });
    dog.batchEnded('t', 0, null);
    clock.advance(TIMEOUT);
    expect(await dog.check()).toEqual([]); // the first check to see records to read starts their timeout
    clock.advance(TIMEOUT);
    let answer!: () => void;
    state.gate = new Promise<void>((r) => (answer = r));
    const first = dog.check();
    expect(await dog.check()).toEqual([]); // skipped: the first is still waiting for Kafka
    answer();
    expect(await first).toHaveLength(1);
  });

  it('a busy partition does not hide another one that gets nothing (kafkajs fetches per broker)', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n), part(1, 100n, 500n)]);
    dog.assigned({ t: [0, 1] });
    dog.batchStarted('t', 0);
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT);
    state.progress++;
    expect((await dog.check()).map((s) => s.partition)).toEqual([1]);
  });

  it('is quiet while the task should not be reading (paused, stalled, retrying a dependency), with a full timeout after', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    state.reading = false;
    clock.advance(3 * TIMEOUT);
    expect(await dog.check()).toEqual([]);
    state.reading = true;
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT);
    expect(await dog.check()).toHaveLength(1);
  });

  it('skips a check when the offsets cannot be read, and watches only the current assignment', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n), part(1, 0n, 500n)]);
    dog.assigned({ t: [0] });
    clock.advance(TIMEOUT);
    state.failOffsets = true;
    expect(await dog.check()).toEqual([]);
    state.failOffsets = false;
    // A new assignment (rejoin) restarts the timeout of every assigned partition.
    dog.assigned({ t: [0, 1] });
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT);
    expect((await dog.check()).map((s) => s.partition)).toEqual([0, 1]);
  });

  it('a batch of a partition that is not assigned is ignored', async () => {
    const { clock, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    dog.fetched('t', 7, '1000');
    dog.batchEnded('t', 7, 1001n);
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT);
    expect(await dog.check()).toHaveLength(1);
  });

  describe('records deleted past the position with no batch to show it', () => {
    it("reports an idle partition behind the log start with kafkajs's reset committed, from the second check in a row on", async () => {
      const { behind, state, dog } = setup([part(0, 100n, 100n)]);
      dog.assigned({ t: [0] });
      dog.batchStarted('t', 0);
      dog.batchEnded('t', 0, 100n);
      await dog.check();
      expect(behind).toEqual([]);
      // Retention (or delete-records) moves the log start to the end: kafkajs resets the fetch and commits its sentinel.
      state.offsets = [part(0, null, 200n, 200n)];
      await dog.check();
      expect(behind).toEqual([]);
      await dog.check();
      expect(behind).toEqual([[{ topic: 't', partition: 0, position: 100n, logStart: 200n }]]);
      // Reported while it lasts: the task's guard decides once (it then expects the partition at the log start).
      await dog.check();
      expect(behind).toHaveLength(2);
    });

    it('is quiet while the group holds a real offset (no kafkajs reset: a fetched batch may still be handed over)', async () => {
      const { behind, dog } = setup([part(0, 100n, 300n, 200n)]);
      dog.assigned({ t: [0] });
      dog.fetched('t', 0, '99');
      await dog.check();
      await dog.check();
      await dog.check();
      expect(behind).toEqual([]);
    });

    it('is quiet while a batch is in progress, after one ran between the checks, and once the position reached the log start', async () => {
      const { behind, dog } = setup([part(0, null, 300n, 200n)]);
      dog.assigned({ t: [0] });
      dog.fetched('t', 0, '99');
      await dog.check();
      dog.batchStarted('t', 0);
      await dog.check();
      await dog.check();
      expect(behind).toEqual([]);
      dog.batchEnded('t', 0, null);
      await dog.check();
      dog.batchStarted('t', 0);
      dog.batchEnded('t', 0, null);
      await dog.check();
      expect(behind).toEqual([]);
      dog.fetched('t', 0, '249');
      await dog.check();
      await dog.check();
      expect(behind).toEqual([]);
    });

    it('never reports a partition the task has not fetched from; a pause or stall between two checks starts the count again', async () => {
      const { behind, state, dog } = setup([part(0, null, 200n, 200n), part(1, null, 200n, 200n)]);
      dog.assigned({ t: [0, 1] });
      dog.fetched('t', 1, '99');
      await dog.check();
      state.reading = false;
      await dog.check();
      state.reading = true;
      await dog.check();
      expect(behind).toEqual([]);
      await dog.check();
      expect(behind).toEqual([[{ topic: 't', partition: 1, position: 100n, logStart: 200n }]]);
    });
  });

  it('stop resolves once the check in flight has ended (its admin request), and a check during it starts none', async () => {
    const { state, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    let answer!: () => void;
    state.gate = new Promise<void>((r) => (answer = r));
    const first = dog.check();
    expect(await dog.check()).toEqual([]); // one at a time
    let stopped = false;
    const stop = dog.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    answer();
    await stop;
    expect(stopped).toBe(true);
    expect(await first).toEqual([]);
  });
});
