import { ManualClock } from '../../src/clock';
import { AdjunctError } from '../../src/errors';
import { StallMonitor } from '../../src/sink/stall-monitor';

const down = new AdjunctError('no host', { code: 'CASSANDRA_UNAVAILABLE' });

describe('StallMonitor', () => {
  it('is STALLED once a failure has lasted retryTimeout, tells each transition once, and clears on success', () => {
    const clock = new ManualClock();
    const m = new StallMonitor({ pipeline: 'p', retryTimeoutMs: 1_000, stallTimeoutMs: undefined }, clock);
    const seen: boolean[] = [];
    m.onChange((s) => seen.push(s));
    m.failed(down);
    expect(m.stalled).toBe(false);
    clock.advance(1_000);
    m.failed(down);
    m.failed(down);
    expect(m.stalled).toBe(true);
    expect(m.cause).toContain('no host');
    m.recovered();
    expect(m.stalled).toBe(false);
    expect(seen).toEqual([true, false]);
    expect(m.expired).toBeNull();
  });

  it('expires after stallTimeout with STALL_TIMEOUT naming the pipeline and the cause', () => {
    const clock = new ManualClock();
    const m = new StallMonitor({ pipeline: 'p', retryTimeoutMs: 1_000, stallTimeoutMs: 10_000 }, clock);
    m.failed(down);
    clock.advance(9_999);
    m.failed(down);
    expect(m.expired).toBeNull();
    clock.advance(1);
    m.failed(down);
    expect(m.expired?.code).toBe('STALL_TIMEOUT');
    expect(m.expired?.message).toMatch(/pipeline p stalled for 10000 ms .*no host/);
  });

  it('a partial outage: one operation failing for retryTimeout is STALLED although others succeed meanwhile; it clears when that one settles', () => {
    const clock = new ManualClock();
    const m = new StallMonitor({ pipeline: 'p', retryTimeoutMs: 1_000, stallTimeoutMs: 5_000 }, clock);
    const stuck = {};
    for (let t = 0; t <= 1_000; t += 100) {
      m.failed(down, stuck); // the batch of a partition whose replicas are down, retried
      const ok = {}; // another partition's batch: fails once, then goes through
      m.failed(down, ok);
      m.settled(ok);
      m.recovered(); // and the sink's durable writes
      clock.advance(100);
    }
    expect(m.stalled).toBe(true);
    clock.advance(4_000);
    m.failed(down, stuck);
    expect(m.expired?.code).toBe('STALL_TIMEOUT');
    m.settled(stuck);
    expect(m.failing).toBe(false);
  });
});
