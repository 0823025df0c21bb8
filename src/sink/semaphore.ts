/** A counting semaphore bounding in-flight work; waiters can time out to do housekeeping (heartbeats). */
export class Semaphore {
  private available: number;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  /** Number of permits in use. */
  get inUse(): number {
    return this.capacity - this.available;
  }

  /** Takes a permit if one is free. */
  tryAcquire(): boolean {
    if (this.available > 0) {
      this.available--;
      return true;
    }
    return false;
  }

  /** Waits up to timeoutMs for a permit; resolves true when acquired. */
  acquire(timeoutMs: number): Promise<boolean> {
    if (this.tryAcquire()) return Promise.resolve(true);
    return new Promise((resolve) => {
      let done = false;
      const waiter = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Returns a permit, handing it to the first waiter if any. */
  release(): void {
    const w = this.waiters.shift();
    if (w) w();
    else this.available++;
  }
}
