import { SingleFlight } from '../../src/concurrency';

function gate<T>(): { promise: Promise<T>; open: (v: T) => void; fail: (e: Error) => void } {
  let open!: (v: T) => void;
  let fail!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    open = res;
    fail = rej;
  });
  return { promise, open, fail };
}

describe('SingleFlight', () => {
  it('shares the job in flight with every caller and starts none while it runs', async () => {
    const flight = new SingleFlight<number>();
    const g = gate<number>();
    let starts = 0;
    const job = () => {
      starts++;
      return g.promise;
    };
    const a = flight.run(job);
    const b = flight.run(job);
    expect(flight.busy).toBe(true);
    expect(b).toBe(a);
    expect(starts).toBe(1);
    g.open(7);
    await expect(a).resolves.toBe(7);
    expect(flight.busy).toBe(false);
    await expect(flight.run(async () => 8)).resolves.toBe(8);
    expect(starts).toBe(1);
  });

  it('settled() waits for the job in flight and never rejects', async () => {
    const flight = new SingleFlight<void>();
    const g = gate<void>();
    const run = flight.run(() => g.promise);
    let settled = false;
    const waiting = flight.settled().then(() => (settled = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(false);
    g.fail(new Error('boom'));
    await expect(run).rejects.toThrow('boom');
    await waiting;
    expect(settled).toBe(true);
    expect(flight.busy).toBe(false);
  });

  it('turns a job that throws synchronously into a rejection and frees the slot', async () => {
    const flight = new SingleFlight<void>();
    await expect(
      flight.run(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(flight.busy).toBe(false);
    await expect(flight.settled()).resolves.toBeUndefined();
  });
});
