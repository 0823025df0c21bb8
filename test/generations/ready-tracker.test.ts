import type { Admin } from 'kafkajs';
import type { PipelineStatusTable } from '../../src/catalog';
import { ReadyTracker } from '../../src/generations';
import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';

/**
 * A tracker over fakes of the admin calls it makes: topics `a` and `b`, one partition each, ten records each; the
 * group's committed offsets are set by hand; `b` can be deleted (its offset fetch then fails, as Kafka's does).
 */
function harness(o: { persisted?: 'READY' | 'BOOTSTRAPPING'; catchUp?: boolean; pollMs?: number } = {}) {
  const committed = new Map<string, number>([
    ['a', 0],
    ['b', 0],
  ]);
  const existing = new Set(['a', 'b']);
  let subscribed = ['a', 'b'];
  const lines: Array<Record<string, unknown>> = [];
  const rows: Array<{ state: string; recordsTotal: number }> = [];
  /** While set, a status write waits for it (a slow Cassandra). */
  let held: Promise<void> | undefined;
  const admin = {
    fetchOffsets: async ({ topics }: { topics: string[] }) =>
      topics.map((topic) => ({ topic, partitions: [{ partition: 0, offset: String(committed.get(topic) ?? -1) }] })),
    fetchTopicOffsets: async (topic: string) => {
      if (!existing.has(topic)) throw new Error('This server does not host this topic-partition');
      return [{ partition: 0, offset: '10', high: '10', low: '0' }];
    },
  } as unknown as Admin;
  const status = {
    get: async () => (o.persisted ? { state: o.persisted, endOffsets: {}, startOffsets: {} } : null),
    put: async (row: { state: string; recordsTotal: number }) => {
      await held;
      rows.push(row);
    },
  } as unknown as PipelineStatusTable;
  const tracker = new ReadyTracker({
    admin,
    groupId: 'g',
    topics: ['a', 'b'],
    subscribed: () => subscribed,
    pipeline: 'p',
    store: 's',
    generation: 2,
    status,
    logger: createLogger('info', { write: (l: string) => lines.push(JSON.parse(l)) }),
    metrics: new AdjunctMetrics({ defaultMetrics: false }),
    workerId: 'w',
    pollMs: o.pollMs ?? 3_600_000,
    catchUp: o.catchUp,
  });
  return {
    tracker,
    lines,
    rows,
    commit: (topic: string, offset: number) => committed.set(topic, offset),
    deleteB: () => existing.delete('b'),
    unsubscribeB: () => (subscribed = ['a']),
    /** Holds status writes until the returned release is called. */
    holdWrites: () => {
      let release!: () => void;
      held = new Promise<void>((r) => (release = r));
      return release;
    },
  };
}

describe('ReadyTracker', () => {
  afterEach(() => jest.useRealTimers());

  it('is READY once the group committed the end offsets captured at start on every partition', async () => {
    const h = harness();
    await h.tracker.begin();
    h.commit('a', 10);
    await h.tracker.poll();
    expect(h.tracker.snapshot().state).toBe('BOOTSTRAPPING');
    h.commit('b', 10);
    await h.tracker.poll();
    expect(h.tracker.snapshot()).toMatchObject({ state: 'READY', done: 20, total: 20 });
    h.tracker.stop();
  });

  it('measures READY without a topic the pipeline no longer consumes (a pattern topic deleted mid-bootstrap), and says so once', async () => {
    const h = harness();
    await h.tracker.begin();
    h.commit('a', 10);
    h.deleteB();
    // Until the subscription drops it, the deleted topic's fetch fails the poll: not READY, nothing skipped silently.
    await expect(h.tracker.poll()).rejects.toThrow('does not host');
    expect(h.tracker.snapshot().state).toBe('BOOTSTRAPPING');
    h.unsubscribeB();
    await h.tracker.poll();
    expect(h.tracker.snapshot()).toMatchObject({ state: 'READY', done: 10, total: 10 });
    expect(h.rows.at(-1)).toMatchObject({ state: 'READY', recordsTotal: 10 });
    const left = h.lines.filter((l) => String(l.msg).includes('leave the READY measure'));
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ level: 40, pipeline: 'p', generation: 2, topics: ['b'] });
    h.tracker.stop();
  });

  it('restores a persisted READY at once for a build tracker (no catch-up), measuring nothing', async () => {
    const h = harness({ persisted: 'READY' });
    await h.tracker.begin();
    expect(h.tracker.snapshot().state).toBe('READY');
    expect(h.rows).toHaveLength(0);
    h.tracker.stop();
  });

  it('with catchUp, a READY generation whose group is behind is CATCHING_UP until it commits the end offsets seen at begin; the persisted READY is never rewritten', async () => {
    const h = harness({ persisted: 'READY', catchUp: true });
    h.commit('a', 4);
    h.commit('b', 10);
    await h.tracker.begin();
    expect(h.tracker.snapshot()).toMatchObject({ state: 'CATCHING_UP', done: 0, total: 6 });
    expect(h.tracker.noProgressYet()).toBe(false); // a READY generation's missing table is never re-created empty
    let ready = false;
    void h.tracker.ready.then(() => (ready = true));
    await Promise.resolve();
    expect(ready).toBe(false);
    h.commit('a', 10);
    await h.tracker.poll();
    expect(h.tracker.snapshot()).toMatchObject({ state: 'READY', done: 6, total: 6 });
    await h.tracker.ready;
    expect(h.rows).toHaveLength(0); // nothing persisted: the status row keeps the generation's first READY
    expect(h.lines.some((l) => String(l.msg).includes('caught up to the end offsets seen at start'))).toBe(true);
    h.tracker.stop();
  });

  it('with catchUp, a READY generation whose group is at the end is READY after one measure', async () => {
    const h = harness({ persisted: 'READY', catchUp: true });
    h.commit('a', 10);
    h.commit('b', 10);
    await h.tracker.begin();
    expect(h.tracker.snapshot()).toMatchObject({ state: 'READY', total: 0 });
    h.tracker.stop();
  });

  it('polls one at a time (ticks during a slow poll start none) and its stop resolves once the poll in flight has ended', async () => {
    jest.useFakeTimers();
    const h = harness({ pollMs: 1_000 });
    await h.tracker.begin();
    const release = h.holdWrites();
    await jest.advanceTimersByTimeAsync(1_000); // a poll measures and waits for its status write
    h.commit('a', 10);
    h.commit('b', 10);
    await jest.advanceTimersByTimeAsync(3_000); // ticks while it waits: a second poll would persist READY first
    let stopped = false;
    const stop = h.tracker.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    release();
    await stop;
    // One write per poll, in order: begin's, then the slow poll's; no other poll ran meanwhile or after the stop.
    expect(h.rows.map((r) => r.state)).toEqual(['BOOTSTRAPPING', 'BOOTSTRAPPING']);
  });
});
