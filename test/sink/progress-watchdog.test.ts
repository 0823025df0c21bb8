import { PartitionOffsets } from '../../src/bootstrap/topic-offsets';
import { ManualClock } from '../../src/clock';
import { createLogger } from '../../src/observability/logger';
import { ProgressWatchdog, StuckPartition } from '../../src/sink/progress-watchdog';

const TIMEOUT = 32_000;

/** A watchdog on fake offsets and a manual clock; `stuck` collects what it reported. */
function setup(offsets: PartitionOffsets[]) {
  const clock = new ManualClock();
  const reported: StuckPartition[][] = [];
  const state = { running: true, offsets, failOffsets: false, progress: 0 };
  const dog = new ProgressWatchdog({
    clock,
    timeoutMs: TIMEOUT,
    offsets: async () => {
      if (state.failOffsets) throw new Error('broker down');
      return state.offsets;
    },
    running: () => state.running,
    progress: () => state.progress,
    onStuck: (s) => reported.push(s),
    log: createLogger('silent'),
  });
  return { clock, reported, state, dog };
}

const part = (partition: number, committed: bigint | null, high: bigint, low = 0n): PartitionOffsets => ({
  topic: 't',
  partition,
  low,
  high,
  committed,
});

describe('progress watchdog', () => {
  it('reports an assigned partition with records to read and no fetched batch for the timeout, once', async () => {
    const { clock, reported, dog } = setup([part(0, 100n, 500n), part(1, 200n, 200n)]);
    dog.assigned({ t: [0, 1] });
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    const stuck = await dog.check();
    expect(stuck).toEqual([{ topic: 't', partition: 0, position: 100n, highWatermark: 500n, idleMs: TIMEOUT }]);
    expect(reported).toEqual([stuck]);
    clock.advance(TIMEOUT);
    expect(await dog.check()).toEqual([]);
    expect(reported).toHaveLength(1);
  });

  it('a fetched batch restarts the partition idle time, and its last offset is the position', async () => {
    const { clock, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    clock.advance(TIMEOUT - 1000);
    dog.fetched('t', 0, '499');
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    // Fetched up to the log end: nothing to read, however long nothing comes (a trailing control record is fetched too).
    clock.advance(10 * TIMEOUT);
    expect(await dog.check()).toEqual([]);
  });

  it('a caught-up partition is never stuck; one behind the log end is, from its committed offset (or the log start)', async () => {
    const { clock, dog } = setup([part(0, 500n, 500n), part(1, null, 50n, 10n)]);
    dog.assigned({ t: [0, 1] });
    clock.advance(TIMEOUT);
    expect(await dog.check()).toEqual([{ topic: 't', partition: 1, position: 10n, highWatermark: 50n, idleMs: TIMEOUT }]);
  });

  it('is quiet while a batch in progress gets on with its records, and counts idle time from the end of the last batch', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    dog.batchStarted();
    for (let i = 0; i < 6; i++) {
      clock.advance(TIMEOUT / 2);
      state.progress++;
      expect(await dog.check()).toEqual([]);
    }
    dog.batchEnded();
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    expect(await dog.check()).toHaveLength(1);
  });

  it('a batch hung for the timeout without progress is stuck', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    state.progress = 7;
    dog.batchStarted();
    clock.advance(TIMEOUT / 2);
    expect(await dog.check()).toEqual([]);
    clock.advance(TIMEOUT / 2);
    expect(await dog.check()).toEqual([{ topic: 't', partition: 0, position: 100n, highWatermark: 500n, idleMs: TIMEOUT }]);
  });

  it('is quiet while the task is not RUNNING (paused, stalled), with a full timeout once it runs again', async () => {
    const { clock, state, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    state.running = false;
    clock.advance(3 * TIMEOUT);
    expect(await dog.check()).toEqual([]);
    state.running = true;
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
    clock.advance(TIMEOUT - 1);
    expect(await dog.check()).toEqual([]);
    clock.advance(1);
    expect((await dog.check()).map((s) => s.partition)).toEqual([0, 1]);
  });

  it('a batch fetched for a partition that is not assigned is ignored', async () => {
    const { clock, dog } = setup([part(0, 100n, 500n)]);
    dog.assigned({ t: [0] });
    dog.fetched('t', 7, '1000');
    clock.advance(TIMEOUT);
    expect(await dog.check()).toHaveLength(1);
  });
});
