import { Clock } from './clock';

/** A clock that moves only when told (tests): sleep() advances time at once and yields to pending promises. */
export class ManualClock implements Clock {
  /** Total milliseconds slept through this clock. */
  slept = 0;

  constructor(private t = 1_700_000_000_000) {}

  /** Current time. */
  now(): number {
    return this.t;
  }

  /** Advances the clock by ms and yields once to the event loop. */
  async sleep(ms: number): Promise<void> {
    this.t += ms;
    this.slept += ms;
    await new Promise<void>((r) => setImmediate(r));
  }

  /** Moves the clock forward without yielding. */
  advance(ms: number): void {
    this.t += ms;
  }
}
