/** Settings of the background retention clean-up. */
export interface RetentionCleanerOptions {
  /** Clean a key after this many puts to it (default 64). */
  every: number;
  /** Most dirty keys tracked; the oldest is cleaned when exceeded (default 10,000). */
  maxDirtyKeys: number;
  /** Clean-ups running at once (default 4). */
  concurrency: number;
  /** Most clean-ups waiting; further ones are dropped (the key is cleaned when next dirtied). Default 10,000. */
  maxQueued: number;
  /** Called with a failed clean-up's error (the key is marked dirty again). */
  onError?: (error: unknown) => void;
}

interface Dirty {
  /** The key as a latin1 string (map id), computed once per key. */
  id: string;
  key: Buffer;
  puts: number;
}

/**
 * Tracks keys dirtied by puts and deletes their expired versions in the background, bounded in memory and concurrency.
 * drain() (awaited by the store's flush) cleans every dirty key and waits for all running clean-ups.
 */
export class RetentionCleaner {
  private readonly dirty = new Map<string, Dirty>();
  private readonly queue: Dirty[] = [];
  private readonly queued = new Set<string>();
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** Number of clean-ups performed (for metrics and tests). */
  completed = 0;
  /** Number of failed clean-ups. */
  failed = 0;

  constructor(
    private readonly clean: (key: Buffer) => Promise<void>,
    private readonly options: RetentionCleanerOptions,
  ) {}

  /** Records a put to key; schedules its clean-up every `every` puts. */
  touched(key: Buffer): void {
    const id = key.toString('latin1');
    let d = this.dirty.get(id);
    if (d === undefined) {
      d = { id, key, puts: 0 };
      this.dirty.set(id, d);
      if (this.dirty.size > this.options.maxDirtyKeys) {
        const oldest = this.dirty.values().next().value as Dirty;
        this.dirty.delete(oldest.id);
        this.enqueue(oldest);
      }
    }
    d.puts++;
    if (d.puts >= this.options.every) {
      this.dirty.delete(id);
      this.enqueue(d);
    }
  }

  /** Cleans every dirty key and resolves when no clean-up is running or queued. */
  async drain(): Promise<void> {
    for (const d of this.dirty.values()) this.enqueue(d, true);
    this.dirty.clear();
    if (this.running === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(d: Dirty, force = false): void {
    if (this.queued.has(d.id)) return;
    if (!force && this.queue.length >= this.options.maxQueued) return;
    this.queued.add(d.id);
    this.queue.push(d);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const d = this.queue.shift() as Dirty;
      this.queued.delete(d.id);
      this.running++;
      this.clean(d.key)
        .then(
          () => {
            this.completed++;
          },
          (e: unknown) => {
            this.failed++;
            if (!this.dirty.has(d.id)) this.dirty.set(d.id, { id: d.id, key: d.key, puts: 0 });
            this.options.onError?.(e);
          },
        )
        .finally(() => {
          this.running--;
          this.pump();
          if (this.running === 0 && this.queue.length === 0) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            for (const w of waiters) w();
          }
        });
    }
  }
}
