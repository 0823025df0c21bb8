import { ManualClock } from '../../src/clock';
import { AdjunctError, BadRecordError, RetriesExhaustedError, withRetry } from '../../src/errors';

const retriable = new AdjunctError('busy', { code: 'CASSANDRA_UNAVAILABLE', retriable: true });

/** An operation failing `failures` times with `error`, then answering 'ok'. */
function failing(failures: number, error: unknown = retriable) {
  const op = { calls: 0, run: async () => (++op.calls <= failures ? Promise.reject(error) : 'ok') };
  return op;
}

describe('withRetry', () => {
  it('retries retriable errors then succeeds', async () => {
    const op = failing(2);
    const r = await withRetry(op.run, {
      timeoutMs: 5000,
      maxDelayMs: 5,
      initialDelayMs: 1,
      isRetriable: (e) => (e as AdjunctError).retriable,
    });
    expect(r).toBe('ok');
    expect(op.calls).toBe(3);
  });

  it('does not retry fatal errors and gives up after the timeout', async () => {
    const fatal = new BadRecordError('bad', { stage: 'extract' });
    await expect(withRetry(failing(1, fatal).run, { timeoutMs: 100, maxDelayMs: 5, isRetriable: () => false })).rejects.toBe(fatal);
    await expect(
      withRetry(failing(Infinity).run, { timeoutMs: 30, maxDelayMs: 5, initialDelayMs: 1, isRetriable: () => true }),
    ).rejects.toBeInstanceOf(RetriesExhaustedError);
  });

  it('with an infinite timeout retries on the injected clock until shouldStop, backing off exponentially up to maxDelayMs', async () => {
    const clock = new ManualClock();
    const op = failing(Infinity);
    const delays: number[] = [];
    const failures: number[] = [];
    const e = await withRetry(op.run, {
      timeoutMs: Number.POSITIVE_INFINITY,
      initialDelayMs: 100,
      maxDelayMs: 1_000,
      clock,
      isRetriable: () => true,
      onFailure: (_, attempt) => failures.push(attempt),
      onRetry: (_, __, delayMs) => delays.push(delayMs),
      shouldStop: () => op.calls >= 8,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RetriesExhaustedError);
    expect((e as RetriesExhaustedError).message).toMatch(/^gave up after 8 attempts in \d+ ms: busy/);
    expect(failures).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Full jitter: each delay lies in [d/2, d] with d = 100, 200, 400, 800, 1000, 1000, 1000.
    const caps = [100, 200, 400, 800, 1_000, 1_000, 1_000];
    expect(delays).toHaveLength(caps.length);
    delays.forEach((d, i) => {
      expect(d).toBeGreaterThanOrEqual(caps[i] / 2);
      expect(d).toBeLessThanOrEqual(caps[i]);
    });
    expect(clock.slept).toBe(delays.reduce((a, b) => a + b, 0));
  });

  it('reports each failure before deciding to stop, so a failure that ends the retries is still reported', async () => {
    let stop = false;
    const seen: string[] = [];
    await expect(
      withRetry(failing(Infinity).run, {
        timeoutMs: Number.POSITIVE_INFINITY,
        maxDelayMs: 1,
        clock: new ManualClock(),
        isRetriable: () => true,
        onFailure: (_, attempt) => {
          seen.push(`failure ${attempt}`);
          stop = attempt === 2;
        },
        onRetry: (_, attempt) => seen.push(`retry ${attempt}`),
        shouldStop: () => stop,
      }),
    ).rejects.toBeInstanceOf(RetriesExhaustedError);
    expect(seen).toEqual(['failure 1', 'retry 1', 'failure 2']);
  });

  it('makes no further attempt when a stop is asked for during a backoff', async () => {
    let stop = false;
    const op = failing(Infinity);
    const e = await withRetry(op.run, {
      timeoutMs: Number.POSITIVE_INFINITY,
      maxDelayMs: 10,
      isRetriable: () => true,
      shouldStop: () => stop,
      sleep: async () => void (stop = op.calls === 2),
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RetriesExhaustedError);
    expect((e as RetriesExhaustedError).attempts).toBe(2);
    expect(op.calls).toBe(2);
  });

  it('takes an attempt already under way as attempt 1, and tells a recovery after failures', async () => {
    const op = failing(1);
    let recovered = 0;
    const slept: number[] = [];
    const r = await withRetry(
      op.run,
      {
        timeoutMs: Number.POSITIVE_INFINITY,
        maxDelayMs: 10,
        initialDelayMs: 10,
        isRetriable: () => true,
        onRecovered: () => recovered++,
        sleep: async (ms) => void slept.push(ms),
      },
      Promise.reject(retriable),
    );
    expect(r).toBe('ok');
    // The first attempt was the promise handed in: fn ran for attempts 2 (failing) and 3.
    expect(op.calls).toBe(2);
    expect(slept).toHaveLength(2);
    expect(recovered).toBe(1);
  });

  it('a first attempt that succeeds is the answer: fn never runs and nothing recovers', async () => {
    const op = failing(0);
    let recovered = 0;
    const r = await withRetry(
      op.run,
      { timeoutMs: 1, maxDelayMs: 1, isRetriable: () => true, onRecovered: () => recovered++ },
      Promise.resolve('first'),
    );
    expect(r).toBe('first');
    expect(op.calls).toBe(0);
    expect(recovered).toBe(0);
  });

  it('tells onSettled once when a loop that failed ends, by success or by giving up; never for a first-attempt success', async () => {
    const options = (settled: string[], name: string, stop = false) => ({
      timeoutMs: Number.POSITIVE_INFINITY,
      maxDelayMs: 1,
      isRetriable: () => true,
      shouldStop: () => stop,
      onSettled: () => void settled.push(name),
      sleep: async () => undefined,
    });
    const settled: string[] = [];
    await withRetry(failing(0).run, options(settled, 'first'));
    await withRetry(failing(2).run, options(settled, 'recovered'));
    await withRetry(failing(5).run, options(settled, 'stopped', true)).catch(() => undefined);
    await withRetry(failing(1, new Error('not retriable')).run, { ...options(settled, 'refused'), isRetriable: () => false }).catch(
      () => undefined,
    );
    expect(settled).toEqual(['recovered', 'stopped']);
  });
});
