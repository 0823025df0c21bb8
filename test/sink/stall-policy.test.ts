import { ManualClock } from '../../src/clock';
import { AdjunctError, BadRecordError, isRecordFailure, RetriesExhaustedError, withRetry } from '../../src/errors';
import { createLogger } from '../../src/observability/logger';
import { AdjunctMetrics } from '../../src/observability/metrics';
import { StalledOperation, StallPolicy } from '../../src/sink/stall-policy';
import { StallMonitor } from '../../src/sink/stall-monitor';

const down = () => new AdjunctError('no host', { code: 'CASSANDRA_UNAVAILABLE', retriable: true, stage: 'store' });

function policyOf(stallTimeoutMs?: number) {
  const clock = new ManualClock();
  const stall = new StallMonitor({ pipeline: 'p', retryTimeoutMs: 1_000, stallTimeoutMs }, clock);
  const metrics = new AdjunctMetrics({ defaultMetrics: false });
  const parts = { pipeline: 'p', stall, metrics, log: createLogger('silent'), clock, initialDelayMs: 100, maxDelayMs: 400 };
  const retries = async () => (await metrics.retries.get()).values.map((v) => [v.labels.stage, v.value]);
  return { policy: new StallPolicy(parts), stall, clock, retries };
}

const infrastructure: StalledOperation = {
  stage: 'write',
  isRetriable: (e) => !isRecordFailure(e),
  stopping: () => false,
  message: 'retrying',
};

/** Fails `n` times with an outage, then answers 'ok'. */
function outage(n: number) {
  let calls = 0;
  return async () => (++calls <= n ? Promise.reject(down()) : 'ok');
}

describe('StallPolicy', () => {
  it('retries an outage for as long as it lasts: STALLED past retryTimeout, counted per stage, cleared by the success', async () => {
    const { policy, stall, retries } = policyOf();
    const states: boolean[] = [];
    stall.onChange((s) => states.push(s));
    expect(await withRetry(outage(12), policy.retryOptions(infrastructure))).toBe('ok');
    expect(states).toEqual([true, false]);
    expect(stall.stalled).toBe(false);
    expect(await retries()).toEqual([['write', 12]]);
  });

  it('never retries a record failure: it goes to tolerance at once', async () => {
    const { policy, stall } = policyOf();
    const bad = new BadRecordError('invalid JSON', { stage: 'value-convert' });
    await expect(withRetry(() => Promise.reject(bad), policy.retryOptions(infrastructure))).rejects.toBe(bad);
    expect(stall.cause).toBeUndefined();
  });

  it('stops at the failure that outlasts errors.stallTimeout, and on shutdown', async () => {
    const { policy, stall, clock } = policyOf(5_000);
    await expect(withRetry(outage(Infinity), policy.retryOptions(infrastructure))).rejects.toBeInstanceOf(RetriesExhaustedError);
    expect(stall.expired?.code).toBe('STALL_TIMEOUT');
    expect(clock.slept).toBeGreaterThanOrEqual(5_000);

    let stopping = false;
    const stopped = policyOf();
    const op = { ...infrastructure, stopping: () => stopping };
    const run = withRetry(outage(Infinity), stopped.policy.retryOptions(op));
    await new Promise((r) => setImmediate(r));
    stopping = true;
    await expect(run).rejects.toBeInstanceOf(RetriesExhaustedError);
    expect(stopped.stall.expired).toBeNull();
  });

  it('as a retry policy for the store: the same rules, each retried request its own operation', async () => {
    const { policy, stall, clock, retries } = policyOf(5_000);
    const p = policy.retryPolicy(infrastructure);
    expect(p.timeoutMs).toBe(Number.POSITIVE_INFINITY);
    expect(p.maxDelayMs).toBe(400);
    expect(p.isRetriable(down())).toBe(true);
    expect(p.isRetriable(new BadRecordError('bad', { stage: 'write' }))).toBe(false);
    const request = {};
    p.onFailure(down(), 1, request);
    p.onRetry!(down(), 1, 100);
    expect(stall.failing).toBe(true);
    expect(stall.cause).toBeUndefined();
    expect(p.shouldStop!()).toBe(false);
    expect(await retries()).toEqual([['write', 1]]);
    // Past the stall timeout the next failure expires the stall, and the store stops retrying.
    clock.advance(5_000);
    p.onFailure(down(), 2, request);
    expect(stall.expired?.code).toBe('STALL_TIMEOUT');
    expect(p.shouldStop!()).toBe(true);
    p.onSettled(request);
    expect(stall.failing).toBe(false);
  });
});
