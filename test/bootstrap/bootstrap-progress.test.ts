import { captureNewPartitions, captureTarget, measureProgress, persistedEnd, persistedStart } from '../../src/bootstrap';
import type { PartitionOffsets } from '../../src/bootstrap';

const part = (partition: number, low: bigint, high: bigint, committed: bigint | null): PartitionOffsets => ({
  topic: 't',
  partition,
  low,
  high,
  committed,
});

describe('bootstrap target and progress', () => {
  it('a first attempt runs from where the group starts (its committed offset, else the log start) to the end offsets seen now', () => {
    const target = captureTarget([part(0, 0n, 100n, null), part(1, 5n, 50n, 20n), part(2, 30n, 40n, 10n)]);
    expect(persistedStart(target)).toEqual({ 't/0': '0', 't/1': '20', 't/2': '30' });
    expect(persistedEnd(target)).toEqual({ 't/0': '100', 't/1': '50', 't/2': '40' });
    expect(measureProgress([part(0, 0n, 100n, null), part(1, 5n, 50n, 20n), part(2, 30n, 40n, 10n)], target)).toMatchObject({
      done: 0n,
      total: 100n + 30n + 10n,
      reached: false,
    });
  });

  it('a later attempt (a restart, another worker of the group) keeps the persisted target: the same total, progress counted from the first start', () => {
    const first = captureTarget([part(0, 0n, 100n, null), part(1, 0n, 60n, null)]);
    const persisted = { end: persistedEnd(first), start: persistedStart(first) };
    // Later: the group has committed most of the backlog and more records arrived.
    const now = [part(0, 0n, 180n, 90n), part(1, 0n, 75n, 60n)];
    const again = captureTarget(now, persisted);
    expect(again).toEqual(first);
    const m = measureProgress(now, again);
    expect(m).toMatchObject({ total: 160n, done: 150n, reached: false });
    expect(measureProgress([part(0, 0n, 180n, 100n), part(1, 0n, 75n, 61n)], again)).toMatchObject({ done: 160n, reached: true });
  });

  it('a row persisted before start offsets were kept (end offsets only) starts from the group position, as before', () => {
    const again = captureTarget([part(0, 0n, 180n, 90n)], { end: { 't/0': '100' }, start: {} });
    expect(measureProgress([part(0, 0n, 180n, 90n)], again)).toMatchObject({ total: 10n, done: 0n });
  });

  it('a partition added mid-bootstrap joins the target at its end offset when first seen: later records do not move it', () => {
    const target = captureTarget([part(0, 0n, 100n, null)]);
    const seen = [part(0, 0n, 120n, 100n), part(1, 0n, 50n, null)];
    expect(captureNewPartitions(target, seen)).toEqual(['t/1']);
    expect(persistedEnd(target)).toEqual({ 't/0': '100', 't/1': '50' });
    expect(measureProgress(seen, target).reached).toBe(false);
    // Records keep arriving on the new partition; the group reaches what was there when it was first seen.
    const later = [part(0, 0n, 140n, 130n), part(1, 0n, 80n, 50n)];
    expect(captureNewPartitions(target, later)).toEqual([]);
    expect(measureProgress(later, target)).toMatchObject({ reached: true, total: 150n });
  });
});
