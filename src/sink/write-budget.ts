/**
 * Bounds in-flight writes by count and by bytes (key + value), shared by every pipeline of a worker. A record larger
 * than the byte bound is admitted when nothing else is in flight, so it can never wedge the pipeline.
 */
export class WriteBudget {
  private count = 0;
  private bytes = 0;
  private readonly waiters: (() => boolean)[] = [];

  constructor(
    readonly maxCount: number,
    readonly maxBytes: number,
  ) {}

  /** Writes in flight. */
  get inFlight(): number {
    return this.count;
  }

  /** Bytes in flight. */
  get inFlightBytes(): number {
    return this.bytes;
  }

  /** Takes budget for one write of `size` bytes if it fits now. */
  tryAcquire(size: number): boolean {
    const fits = this.count === 0 || (this.count < this.maxCount && this.bytes + size <= this.maxBytes);
    if (!fits) return false;
    this.count++;
    this.bytes += size;
    return true;
  }

  /** Waits up to timeoutMs for budget; resolves true when acquired, false on timeout (to heartbeat, then ask again). */
  acquire(size: number, timeoutMs: number): Promise<boolean> {
    if (this.tryAcquire(size)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = () => {
        if (!this.tryAcquire(size)) return false;
        clearTimeout(timer);
        resolve(true);
        return true;
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Returns the budget of one finished write and wakes the waiters it now fits. */
  release(size: number): void {
    this.count--;
    this.bytes -= size;
    while (this.waiters.length) {
      if (!this.waiters[0]()) break;
      this.waiters.shift();
    }
  }
}
