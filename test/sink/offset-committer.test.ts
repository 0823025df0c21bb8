import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { OffsetCommit, OffsetCommitter } from '../../src/sink/offset-committer';
import { PartitionRegistry } from '../../src/sink/partition-registry';
import { FakeWriter, settle } from './fakes';

/** A committer on one partition whose records 0..n-1 are durable, and a commit function the test settles by hand. */
async function setup(durable: number) {
  const registry = new PartitionRegistry({ open: async () => new FakeWriter() }, async () => null, createLogger('silent'));
  const st = await registry.open('t', 0);
  for (let i = 0; i < durable; i++) st.tracker.complete(st.tracker.begin(String(i), i));
  const calls: { offsets: OffsetCommit; resolve: () => void }[] = [];
  const commitOffsets = (offsets: OffsetCommit) => new Promise<void>((resolve) => calls.push({ offsets, resolve }));
  const committer = new OffsetCommitter('p', registry, commitOffsets, new AdjunctMetrics({ defaultMetrics: false }), 20);
  return { st, calls, committer };
}

describe('offset commits bounded in time (offset.flush.timeout)', () => {
  it('a commit that does not finish is given up; the next one sends the offsets again', async () => {
    const { st, calls, committer } = await setup(5);
    await expect(committer.commit()).rejects.toMatchObject({ code: 'KAFKA_UNAVAILABLE', stage: 'commit' });
    expect(st.committed).toBeNull();
    const second = committer.commit();
    await settle();
    expect(calls.map((c) => c.offsets)).toEqual([[{ topic: 't', partition: 0, offset: '5' }], [{ topic: 't', partition: 0, offset: '5' }]]);
    calls[1].resolve();
    await second;
    expect(st.committed).toBe(5n);
  });

  it('a given-up commit landing late (maybe over a later commit) makes the next commit send the position again', async () => {
    const { st, calls, committer } = await setup(3);
    await expect(committer.commit()).rejects.toMatchObject({ code: 'KAFKA_UNAVAILABLE' });
    for (let i = 3; i < 6; i++) st.tracker.complete(st.tracker.begin(String(i), i));
    const later = committer.commit();
    await settle();
    calls[1].resolve();
    await later;
    expect(st.committed).toBe(6n);
    calls[0].resolve(); // the given-up commit of offset 3 lands now, over 6
    await settle();
    expect(st.committed).toBe(6n);
    const again = committer.commit();
    await settle();
    expect(calls[2]?.offsets).toEqual([{ topic: 't', partition: 0, offset: '6' }]);
    calls[2].resolve();
    await again;
    // Sent again once: nothing more to send after that.
    await committer.commit();
    expect(calls).toHaveLength(3);
  });
});
