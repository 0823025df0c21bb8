import { Admin } from 'kafkajs';
import { GroupPositions } from '../../src/offsets';

describe('a group position as the store knows it', () => {
  it('the committed offset; the one seen at start when kafkajs has since committed its reset sentinel over it', async () => {
    let committed = '100';
    const admin = {
      fetchOffsets: async () => [{ topic: 't', partitions: [{ partition: 0, offset: committed, metadata: null }] }],
    } as unknown as Pick<Admin, 'fetchOffsets'>;
    const positions = new GroupPositions(admin, 'g');
    await positions.snapshot(['t']);
    committed = '120';
    expect(await positions.committed('t', 0)).toBe(120n);
    committed = '-2';
    expect(await positions.committed('t', 0)).toBe(100n);
  });

  it('a position decided at start (policy latest: the log start) stands until the group commits past it', async () => {
    let committed = '100';
    const admin = {
      fetchOffsets: async () => [{ topic: 't', partitions: [{ partition: 0, offset: committed, metadata: null }] }],
    } as unknown as Pick<Admin, 'fetchOffsets'>;
    const positions = new GroupPositions(admin, 'g', new Map([['t/0', 150n]]));
    await positions.snapshot(['t']);
    expect(await positions.committed('t', 0)).toBe(150n);
    committed = '-2';
    expect(await positions.committed('t', 0)).toBe(150n);
    committed = '170';
    expect(await positions.committed('t', 0)).toBe(170n);
  });

  it('none when the group never committed', async () => {
    const admin = {
      fetchOffsets: async () => [{ topic: 't', partitions: [{ partition: 0, offset: '-1', metadata: null }] }],
    } as unknown as Pick<Admin, 'fetchOffsets'>;
    const positions = new GroupPositions(admin, 'g');
    await positions.snapshot(['t']);
    expect(await positions.committed('t', 0)).toBeNull();
  });
});
