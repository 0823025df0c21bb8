import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { OffsetLossPolicy, OffsetOutOfRangePolicy, PartitionPosition, offsetLossAt } from '../../src/offsets';

const at = (expected: bigint | null, logStart = 150n, highWatermark = 200n): PartitionPosition => ({
  topic: 't',
  partition: 3,
  expected,
  logStart,
  highWatermark,
});

function policyOf(policy: OffsetOutOfRangePolicy) {
  const metrics = new AdjunctMetrics({ defaultMetrics: false });
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  const log = createLogger('silent');
  log.error = ((obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg })) as typeof log.error;
  const lost = async () => (await metrics.lostOffsets.get()).values.reduce((n, v) => n + v.value, 0);
  return { p: new OffsetLossPolicy({ pipeline: 'p', policy, metrics, log }), lines, lost };
}

describe('offset loss at a position', () => {
  it('an expected offset below the log start lost exactly [expected, logStart − 1]', () => {
    expect(offsetLossAt(at(100n))).toMatchObject({ kind: 'deleted', from: 100n, to: 149n, lost: 50n });
    expect(offsetLossAt(at(149n))).toMatchObject({ kind: 'deleted', from: 149n, to: 149n, lost: 1n });
  });

  it('an expected offset in the log, at its start or at its end, is no loss', () => {
    expect(offsetLossAt(at(150n))).toBeNull();
    expect(offsetLossAt(at(170n))).toBeNull();
    expect(offsetLossAt(at(200n))).toBeNull();
    expect(offsetLossAt(at(0n, 0n, 0n))).toBeNull();
  });

  it('no position, and the negative kafkajs sentinels (-1 latest, -2 earliest), are no position: no loss', () => {
    expect(offsetLossAt(at(null))).toBeNull();
    expect(offsetLossAt(at(-1n))).toBeNull();
    expect(offsetLossAt(at(-2n))).toBeNull();
  });

  it('an expected offset past the log end (log truncated or topic recreated) is out of range with nothing known lost', () => {
    expect(offsetLossAt(at(250n))).toMatchObject({ kind: 'pastEnd', expected: 250n, lost: 0n });
    expect(offsetLossAt(at(201n))).toMatchObject({ kind: 'pastEnd' });
  });
});

describe('OffsetLossPolicy decisions', () => {
  it('fail: an OFFSET_OUT_OF_RANGE error naming topic/partition and the lost range; logged and counted', async () => {
    const { p, lines, lost } = policyOf('fail');
    const d = p.decide(at(100n));
    expect(d.kind).toBe('fail');
    if (d.kind !== 'fail') return;
    expect(d.error.code).toBe('OFFSET_OUT_OF_RANGE');
    expect(d.error.message).toContain('t/3 offsets 100..149 (50 records)');
    expect(d.error.context).toMatchObject({ topic: 't', partition: 3, from: '100', to: '149' });
    expect(lines).toHaveLength(1);
    expect(lines[0].msg).toMatch(/^OFFSET OUT OF RANGE: .*t\/3 offsets 100\.\.149.*policy=fail/);
    expect(await lost()).toBe(50);
  });

  it('reload: a new generation; the gap logged and counted', async () => {
    const { p, lines, lost } = policyOf('reload');
    expect(p.decide(at(120n))).toMatchObject({ kind: 'reload', loss: { from: 120n, to: 149n, lost: 30n } });
    expect(lines[0].msg).toContain('policy=reload');
    expect(await lost()).toBe(30);
  });

  it('latest: goes on from the log start (the first offset still there), never the high watermark; counts exactly the lost offsets', async () => {
    const { p, lines, lost } = policyOf('latest');
    const d = p.decide(at(100n));
    expect(d).toMatchObject({ kind: 'latest', resumeAt: 150n, loss: { lost: 50n } });
    expect(lines[0].msg).toContain('continuing from the log start 150');
    expect(await lost()).toBe(50);
  });

  it('an expected offset at the log start, no position or a negative sentinel: continue, nothing logged or counted', async () => {
    for (const policy of ['fail', 'reload', 'latest'] as const) {
      const { p, lines, lost } = policyOf(policy);
      for (const expected of [150n, null, -1n, -2n]) expect(p.decide(at(expected))).toEqual({ kind: 'continue' });
      expect(lines).toHaveLength(0);
      expect(await lost()).toBe(0);
    }
  });

  it('past the log end: each policy applies, the error names the position and the log end, nothing is counted lost', async () => {
    const fail = policyOf('fail');
    const d = fail.p.decide(at(250n));
    expect(d.kind).toBe('fail');
    if (d.kind === 'fail') expect(d.error.message).toContain('t/3 expected offset 250 is past the log end 200');
    expect(await fail.lost()).toBe(0);
    expect(policyOf('latest').p.decide(at(250n))).toMatchObject({ kind: 'latest', resumeAt: 150n });
    expect(policyOf('reload').p.decide(at(250n))).toMatchObject({ kind: 'reload' });
  });

  it('an error for several partitions names every lost range', () => {
    const { p } = policyOf('fail');
    const e = p.error([offsetLossAt(at(100n))!, offsetLossAt({ ...at(10n), partition: 4 })!]);
    expect(e.message).toContain('t/3 offsets 100..149 (50 records)');
    expect(e.message).toContain('t/4 offsets 10..149 (140 records)');
  });
});
