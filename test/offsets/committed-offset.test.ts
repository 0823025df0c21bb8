import { committedOffsetOf } from '../../src/offsets';

describe('committed offsets as kafkajs reports them', () => {
  it('a non-negative offset is the next record to read', () => {
    expect(committedOffsetOf('0')).toBe(0n);
    expect(committedOffsetOf('150')).toBe(150n);
  });

  it("none ('-1', '' or missing) and kafkajs's reset sentinels (-2 earliest, -1 latest) are no committed offset", () => {
    for (const raw of ['-1', '-2', '', null, undefined]) expect(committedOffsetOf(raw)).toBeNull();
  });
});
