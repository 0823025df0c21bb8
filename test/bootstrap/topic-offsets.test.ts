import { Admin } from 'kafkajs';
import { fetchPartitionOffsets } from '../../src/bootstrap';

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
