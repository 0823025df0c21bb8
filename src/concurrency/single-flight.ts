/**
 * One asynchronous job at a time, and a way to wait for it: a timer-driven refresh, poll or check that must not overlap
 * itself, and whose owner's stop must wait for the one in flight (its requests done) before closing the clients it uses.
 */
export class SingleFlight<T> {
  private current?: Promise<T>;

  /** Whether a job is in flight. */
  get busy(): boolean {
    return this.current !== undefined;
  }

  /** Starts `job`, or returns the job in flight (every caller shares it until it settles). */
  run(job: () => Promise<T>): Promise<T> {
    if (this.current) return this.current;
    const started: Promise<T> = (async () => job())().finally(() => {
      if (this.current === started) this.current = undefined;
    });
    this.current = started;
    return started;
  }

  /** Resolves once the job in flight, if any, has settled (never rejects: its caller sees its failure). */
  settled(): Promise<void> {
    return this.current ? this.current.then(noop, noop) : Promise.resolve();
  }
}

const noop = (): void => undefined;
