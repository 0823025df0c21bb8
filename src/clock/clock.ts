/** Time as the core code sees it: injected so loops, retries and stalls can be tested without real waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after ms milliseconds. */
  sleep(ms: number): Promise<void>;
}

/** The wall clock and real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise<void>((r) => setTimeout(r, ms)),
};
