import { Admin } from 'kafkajs';
import { fetchPartitionOffsets } from '../../src/bootstrap';
import { ManualClock } from '../../src/clock';
import { protocolError } from '../kafka/protocol-error';

describe('partition offsets for bootstrap, READY and status', () => {
  it("kafkajs's negative committed offsets (-1 none, -2 its earliest reset) read as no committed offset", async () => {
    const admin = {
      fetchOffsets: async () => [
        {
          topic: 't',
          partitions: [
            { partition: 0, offset: '-2', metadata: null },
            { partition: 1, offset: '-1', metadata: null },
            { partition: 2, offset: '7', metadata: null },
          ],
        },
      ],
      fetchTopicOffsets: async () => [0, 1, 2].map((partition) => ({ partition, offset: '9', low: '3', high: '9' })),
    } as unknown as Admin;
    expect((await fetchPartitionOffsets(admin, 'g', ['t'])).map((p) => p.committed)).toEqual([null, null, 7n]);
  });
});

describe('partition offsets against a coordinator that is not ready yet', () => {
  it('retries NOT_COORDINATOR twice, then returns the offsets', async () => {
    const clock = new ManualClock();
    let offsetFetches = 0;
    const admin = {
      fetchOffsets: async () => {
        if (++offsetFetches <= 2) throw protocolError('NOT_COORDINATOR_FOR_GROUP', 16);
        return [{ topic: 't', partitions: [{ partition: 0, offset: '5', metadata: null }] }];
      },
      fetchTopicOffsets: async () => [{ partition: 0, offset: '9', low: '0', high: '9' }],
    } as unknown as Admin;
    const out = await fetchPartitionOffsets(admin, 'g', ['t'], { clock });
    expect(offsetFetches).toBe(3);
    expect(out).toEqual([{ topic: 't', partition: 0, low: 0n, high: 9n, committed: 5n, reset: false }]);
  });

  it('gives up after the bound with KAFKA_UNAVAILABLE naming the group', async () => {
    const admin = {
      fetchOffsets: async () => {
        throw protocolError('GROUP_COORDINATOR_NOT_AVAILABLE', 15);
      },
      fetchTopicOffsets: async () => [],
    } as unknown as Admin;
    await expect(fetchPartitionOffsets(admin, 'g', ['t'], { clock: new ManualClock(), timeoutMs: 5000 })).rejects.toMatchObject({
      code: 'KAFKA_UNAVAILABLE',
      message: expect.stringContaining('fetching the committed offsets of group g failed'),
    });
  });
});
