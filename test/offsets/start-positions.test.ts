import { Admin } from 'kafkajs';
import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { checkStartPositions, OffsetLossPolicy, OffsetOutOfRangePolicy } from '../../src/offsets';

/** An admin over one topic's partitions: committed offsets as kafkajs reports them, log start and end. */
function fakeAdmin(parts: { committed: string; low: number; high: number }[]) {
  const setOffsets: unknown[] = [];
  const admin = {
    fetchOffsets: async () => [
      { topic: 't', partitions: parts.map((p, partition) => ({ partition, offset: p.committed, metadata: null })) },
    ],
    fetchTopicOffsets: async () =>
      parts.map((p, partition) => ({ partition, offset: String(p.high), low: String(p.low), high: String(p.high) })),
    setOffsets: async (o: unknown) => void setOffsets.push(o),
  } as unknown as Admin;
  return { admin, setOffsets };
}

const policy = (p: OffsetOutOfRangePolicy) =>
  new OffsetLossPolicy({ pipeline: 'p', policy: p, metrics: new AdjunctMetrics({ defaultMetrics: false }), log: createLogger('silent') });

describe('the start-up check of committed positions', () => {
  const lostAndKept = [
    { committed: '100', low: 150, high: 200 },
    { committed: '30', low: 20, high: 40 },
  ];

  it('fail: throws OFFSET_OUT_OF_RANGE naming the lost range and leaves the group where it is', async () => {
    const { admin, setOffsets } = fakeAdmin(lostAndKept);
    await expect(checkStartPositions(admin, 'g', ['t'], policy('fail'))).rejects.toMatchObject({
      code: 'OFFSET_OUT_OF_RANGE',
      message: expect.stringContaining('t/0 offsets 100..149 (50 records)'),
    });
    expect(setOffsets).toEqual([]);
  });

  it('latest: goes on from the log start (not the high watermark), reporting exactly the lost offsets; the group is not moved by an admin', async () => {
    const { admin, setOffsets } = fakeAdmin(lostAndKept);
    expect(await checkStartPositions(admin, 'g', ['t'], policy('latest'))).toEqual({
      reload: false,
      lostOffsets: 50,
      startAt: new Map([['t/0', 150n]]),
    });
    expect(setOffsets).toEqual([]);
  });

  it('reload: asks for a new generation and moves nothing', async () => {
    const { admin, setOffsets } = fakeAdmin(lostAndKept);
    expect(await checkStartPositions(admin, 'g', ['t'], policy('reload'))).toEqual({ reload: true, lostOffsets: 0, startAt: new Map() });
    expect(setOffsets).toEqual([]);
  });

  it('no committed position (-1, a new group) is no loss under any policy', async () => {
    for (const p of ['fail', 'latest', 'reload'] as const) {
      const { admin, setOffsets } = fakeAdmin([{ committed: '-1', low: 150, high: 200 }]);
      expect(await checkStartPositions(admin, 'g', ['t'], policy(p))).toEqual({ reload: false, lostOffsets: 0, startAt: new Map() });
      expect(setOffsets).toEqual([]);
    }
  });

  describe("kafkajs's reset (-2) committed over the group's position (a worker killed before it judged the gap)", () => {
    const reset = [
      { committed: '-2', low: 150, high: 200 },
      { committed: '170', low: 150, high: 200 },
    ];

    it('fail: throws OFFSET_OUT_OF_RANGE naming the partition and the log start, not a silent start from the earliest offset', async () => {
      const { admin } = fakeAdmin(reset);
      await expect(checkStartPositions(admin, 'g', ['t'], policy('fail'))).rejects.toMatchObject({
        code: 'OFFSET_OUT_OF_RANGE',
        message: expect.stringMatching(/t\/0 group position was reset .* before the log start 150 may be lost, how many is unknown/),
      });
    });

    it('latest: goes on from the log start, counting nothing (the lost range is unknown)', async () => {
      const { admin, setOffsets } = fakeAdmin(reset);
      expect(await checkStartPositions(admin, 'g', ['t'], policy('latest'))).toEqual({
        reload: false,
        lostOffsets: 0,
        startAt: new Map([['t/0', 150n]]),
      });
      expect(setOffsets).toEqual([]);
    });

    it('reload: asks for a new generation', async () => {
      const { admin } = fakeAdmin(reset);
      expect(await checkStartPositions(admin, 'g', ['t'], policy('reload'))).toMatchObject({ reload: true, lostOffsets: 0 });
    });
  });
});
