import type { Admin } from 'kafkajs';
import type { PipelineStatusTable } from '../../src/catalog';
import { ReadyTracker } from '../../src/generations';
import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';

/**
 * A tracker over fakes of the admin calls it makes: topics `a` and `b`, one partition each, ten records each; the
 * group's committed offsets are set by hand; `b` can be deleted (its offset fetch then fails, as Kafka's does).
 */
function harness() {
  const committed = new Map<string, number>([
    ['a', 0],
    ['b', 0],
  ]);
  const existing = new Set(['a', 'b']);
  let subscribed = ['a', 'b'];
  const lines: Array<Record<string, unknown>> = [];
  const rows: Array<{ state: string; recordsTotal: number }> = [];
  const admin = {
    fetchOffsets: async ({ topics }: { topics: string[] }) =>
      topics.map((topic) => ({ topic, partitions: [{ partition: 0, offset: String(committed.get(topic) ?? -1) }] })),
    fetchTopicOffsets: async (topic: string) => {
      if (!existing.has(topic)) throw new Error('This server does not host this topic-partition');
      return [{ partition: 0, offset: '10', high: '10', low: '0' }];
    },
  } as unknown as Admin;
  const status = {
    get: async () => null,
    put: async (row: { state: string; recordsTotal: number }) => void rows.push(row),
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
    pollMs: 3_600_000,
  });
  return {
    tracker,
    lines,
    rows,
    commit: (topic: string, offset: number) => committed.set(topic, offset),
    deleteB: () => existing.delete('b'),
    unsubscribeB: () => (subscribed = ['a']),
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
});
