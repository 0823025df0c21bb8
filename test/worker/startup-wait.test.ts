import { ManualClock } from '../../src/clock';
import { AdjunctError, RetriesExhaustedError } from '../../src/errors';
import { allAtStartup, stoppedWhileStarting, unlessStopped, waitAtStartup } from '../../src/worker/startup-wait';

const retriable = (e: unknown) => e instanceof Error && e.message === 'not yet';

describe('waitAtStartup', () => {
  it('retries what isRetriable accepts until the attempt succeeds', async () => {
    let calls = 0;
    const r = await waitAtStartup('waiting', async () => (++calls < 3 ? Promise.reject(new Error('not yet')) : 'up'), retriable, {
      clock: new ManualClock(),
    });
    expect({ r, calls }).toEqual({ r: 'up', calls: 3 });
  });

  it('throws any other failure at once, and RetriesExhaustedError (attempts, time) past the bound', async () => {
    const clock = new ManualClock();
    const other = await waitAtStartup('waiting', () => Promise.reject(new Error('no')), retriable, { clock }).catch((e: unknown) => e);
    expect(other).toEqual(new Error('no'));
    expect(clock.slept).toBe(0);
    const e = await waitAtStartup('waiting', () => Promise.reject(new Error('not yet')), retriable, { clock, timeoutMs: 5000 }).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(RetriesExhaustedError);
    expect((e as RetriesExhaustedError).attempts).toBeGreaterThan(2);
    expect((e as RetriesExhaustedError).elapsedMs).toBeGreaterThanOrEqual(5000);
  });

  it('a stop during the backoff ends the wait before another attempt: STOPPED_WHILE_STARTING naming the wait', async () => {
    let calls = 0;
    let stop = false;
    const t0 = Date.now();
    const e = await waitAtStartup(
      'waiting for X at start-up',
      async () => {
        calls++;
        setTimeout(() => (stop = true), 20);
        throw new Error('not yet');
      },
      retriable,
      { shouldStop: () => stop },
    ).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'STOPPED_WHILE_STARTING', retriable: false, message: 'stopped while waiting for X at start-up' });
    expect(calls).toBe(1);
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});

describe('unlessStopped', () => {
  it('settles with the promise, or rejects once stopped and tells about the promise left behind', async () => {
    expect(
      await unlessStopped(
        Promise.resolve(7),
        () => false,
        'w',
        () => undefined,
      ),
    ).toBe(7);
    let abandoned = 0;
    let stop = false;
    setTimeout(() => (stop = true), 30);
    const e = await unlessStopped(
      new Promise(() => undefined),
      () => stop,
      'w',
      () => abandoned++,
    ).catch((x: unknown) => x);
    expect(e).toEqual(stoppedWhileStarting('w'));
    expect((e as AdjunctError).code).toBe('STOPPED_WHILE_STARTING');
    expect(abandoned).toBe(1);
  });
});

describe('allAtStartup', () => {
  it("returns every wait's result", async () => {
    expect(await allAtStartup(() => false, [async () => 'catalog', async () => 7])).toEqual(['catalog', 7]);
  });

  it("a failure stops the sibling, waits for it to settle, and throws the real failure, not the sibling's stop", async () => {
    const refused = new AdjunctError('login refused', { code: 'CONFIG_INVALID' });
    let siblingSettled = false;
    const e = await allAtStartup(
      () => false,
      [
        async () => Promise.reject(refused),
        // The sibling keeps waiting until its shouldStop says so, then stops as a start-up wait does.
        (shouldStop) =>
          waitAtStartup('waiting for Y at start-up', () => Promise.reject(new Error('not yet')), retriable, { shouldStop }).finally(
            () => (siblingSettled = true),
          ),
      ],
    ).catch((x: unknown) => x);
    expect(e).toBe(refused);
    expect(siblingSettled).toBe(true);
  });

  it("the caller's own stop reaches every wait", async () => {
    let stop = false;
    setTimeout(() => (stop = true), 20);
    const wait = (shouldStop: () => boolean) => unlessStopped(new Promise<never>(() => undefined), shouldStop, 'w', () => undefined);
    const e = await allAtStartup(() => stop, [wait, wait]).catch((x: unknown) => x);
    expect((e as AdjunctError).code).toBe('STOPPED_WHILE_STARTING');
  });
});
