/** Why a write did not get budget now: its own share is used up, or the budget the shares draw from is. */
type Shortfall = 'share' | 'shared';

/** A write waiting for budget: tries again when budget is returned (true once acquired). */
interface Waiter {
  retry(): Shortfall | null;
}

/**
 * Bounds in-flight writes by count and by bytes (key + value), shared by every pipeline of a worker. A record larger
 * than the byte bound is admitted when nothing else is in flight, so it can never wedge the pipeline. Each pipeline
 * draws through its own `share` of it, so a pipeline whose writes stall (its table gone, its replicas down) cannot hold
 * all of it and starve the others.
 */
export class WriteBudget {
  private count = 0;
  private bytes = 0;
  /** Writes waiting, in arrival order (kept by the budget the shares draw from). */
  private readonly waiters: Waiter[] = [];

  constructor(
    readonly maxCount: number,
    readonly maxBytes: number,
    /** The budget this one is a share of. */
    private readonly parent?: WriteBudget,
  ) {}

  /**
   * A share of this budget for one of `users` users: at most all of it when alone, else (1 − 1/(2 × users)) of it, so
   * every other user always finds at least half of its even part free of this one's writes.
   */
  share(users: number): WriteBudget {
    // Alone, a pipeline draws on the budget itself: the same order and cost as before shares existed.
    if (users <= 1) return this;
    const fraction = 1 - 1 / (2 * users);
    return new WriteBudget(Math.max(1, Math.floor(this.maxCount * fraction)), Math.max(1, Math.floor(this.maxBytes * fraction)), this);
  }

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
    return this.take(size) === null;
  }

  private take(size: number): Shortfall | null {
    const parent = this.parent;
    const fits = this.count === 0 || (this.count < this.maxCount && this.bytes + size <= this.maxBytes);
    if (!fits) return parent !== undefined ? 'share' : 'shared';
    if (parent !== undefined && !parent.tryAcquire(size)) return 'shared';
    this.count++;
    this.bytes += size;
    return null;
  }

  /** Waits up to timeoutMs for budget; resolves true when acquired, false on timeout (to heartbeat, then ask again). */
  acquire(size: number, timeoutMs: number): Promise<boolean> {
    if (this.tryAcquire(size)) return Promise.resolve(true);
    const queue = (this.parent ?? this).waiters;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        retry: () => {
          const short = this.take(size);
          if (short !== null) return short;
          clearTimeout(timer);
          resolve(true);
          return null;
        },
      };
      const timer = setTimeout(() => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      queue.push(waiter);
    });
  }

  /**
   * Returns the budget of one finished write and wakes the waiters it now fits, in arrival order: the first that does
   * not fit the shared budget stops the round (a large write is not overtaken), one whose own share is used up is passed.
   */
  release(size: number): void {
    this.count--;
    this.bytes -= size;
    if (this.parent !== undefined) return this.parent.release(size);
    for (let i = 0; i < this.waiters.length;) {
      const short = this.waiters[i].retry();
      if (short === null) this.waiters.splice(i, 1);
      else if (short === 'share') i++;
      else break;
    }
  }
}
