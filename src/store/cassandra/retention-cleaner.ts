/** Settings of the background retention clean-up. */
export interface RetentionCleanerOptions {
  /** Clean a key after this many puts to it (default 64). */
  every: number;
  /** Most dirty keys tracked; the oldest is cleaned when exceeded (default 10,000). */
  maxDirtyKeys: number;
  /**
   * Most key bytes held, half for dirty keys and half for queued clean-ups (default 1 MiB per writer). Past it the
   * oldest dirty key is queued early, and a clean-up that finds the queue full is dropped (see maxQueued).
   */
  maxTrackedBytes?: number;
  /** Clean-ups running at once (default 4). */
  concurrency: number;
  /** Most clean-ups waiting; further ones are dropped (the key is cleaned when next dirtied). Default 10,000. */
  maxQueued: number;
  /** Called with a failed clean-up's error (the key is marked dirty again). */
  onError?: (error: unknown) => void;
}

/** Default byte budget of one cleaner (one writer). */
const DEFAULT_MAX_TRACKED_BYTES = 1 << 20;

interface Dirty {
  /** The encoded key as a latin1 string: the only copy of the key held (a Buffer is made again to clean it). */
  id: string;
  /** keyHash of the key's bytes (the lookup index's key). */
  hash: number;
  puts: number;
}

/** FNV-1a of a key's bytes: indexes dirty keys so a put to a tracked key makes no string. */
function keyHash(key: Buffer): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193);
  return h | 0;
}

/** keyHash of a key held as a latin1 string (each char is one byte). */
function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h | 0;
}

/** Whether the latin1 string id holds exactly the bytes of key. */
function sameKey(id: string, key: Buffer): boolean {
  if (id.length !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (id.charCodeAt(i) !== key[i]) return false;
  return true;
}

/**
 * Tracks keys dirtied by puts and deletes their expired versions in the background, bounded in memory (by key count
 * and by key bytes; each key is held once, as a latin1 string) and in concurrency.
 * drain() (awaited by the store's flush) cleans every dirty key and waits for all running clean-ups.
 * A dropped clean-up only delays the physical removal of versions that reads already hide.
 */
export class RetentionCleaner {
  private readonly dirty = new Map<string, Dirty>();
  /** Dirty keys by keyHash (one per hash; on a collision the other key is still found in `dirty`). */
  private readonly byHash = new Map<number, Dirty>();
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly halfBudget: number;
  private dirtyBytes = 0;
  private queuedBytes = 0;
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** Number of clean-ups performed (for metrics and tests). */
  completed = 0;
  /** Number of failed clean-ups. */
  failed = 0;
  /** Number of clean-ups dropped because the queue was full (by count or bytes). */
  dropped = 0;

  constructor(
    private readonly clean: (key: Buffer) => Promise<void>,
    private readonly options: RetentionCleanerOptions,
  ) {
    this.halfBudget = Math.floor((options.maxTrackedBytes ?? DEFAULT_MAX_TRACKED_BYTES) / 2);
  }

  /** Key bytes currently held by dirty keys and queued clean-ups (for tests and metrics). */
  get trackedBytes(): number {
    return this.dirtyBytes + this.queuedBytes;
  }

  /** Records a put to key; schedules its clean-up every `every` puts. */
  touched(key: Buffer): void {
    const hash = keyHash(key);
    let d = this.byHash.get(hash);
    let id: string | undefined;
    if (d === undefined || !sameKey(d.id, key)) {
      // Not indexed (or a hash collision): `dirty`, by the key's string, is the source of truth.
      id = key.toString('latin1');
      d = this.dirty.get(id);
    }
    if (d === undefined) {
      d = this.markDirty(id as string, hash);
      while (this.dirty.size > 1 && (this.dirty.size > this.options.maxDirtyKeys || this.dirtyBytes > this.halfBudget)) {
        const oldest = this.dirty.values().next().value as Dirty;
        this.forget(oldest.id);
        this.enqueue(oldest.id);
      }
    }
    d.puts++;
    if (d.puts >= this.options.every || this.dirtyBytes > this.halfBudget) {
      this.forget(d.id);
      this.enqueue(d.id);
    }
  }

  private markDirty(id: string, hash: number): Dirty {
    const d: Dirty = { id, hash, puts: 0 };
    this.dirty.set(id, d);
    this.byHash.set(hash, d);
    this.dirtyBytes += id.length;
    return d;
  }

  /** Cleans every dirty key and resolves when no clean-up is running or queued. */
  async drain(): Promise<void> {
    for (const id of [...this.dirty.keys()]) {
      this.forget(id);
      this.enqueue(id, true);
    }
    if (this.running === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private forget(id: string): void {
    const d = this.dirty.get(id);
    if (d === undefined) return;
    this.dirty.delete(id);
    if (this.byHash.get(d.hash) === d) this.byHash.delete(d.hash);
    this.dirtyBytes -= id.length;
  }

  private enqueue(id: string, force = false): void {
    if (this.queued.has(id)) return;
    if (
      !force &&
      (this.queue.length >= this.options.maxQueued || (this.queue.length > 0 && this.queuedBytes + id.length > this.halfBudget))
    ) {
      this.dropped++;
      return;
    }
    this.queued.add(id);
    this.queue.push(id);
    this.queuedBytes += id.length;
    this.pump();
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const id = this.queue.shift() as string;
      this.queued.delete(id);
      this.queuedBytes -= id.length;
      this.running++;
      this.clean(Buffer.from(id, 'latin1'))
        .then(
          () => {
            this.completed++;
          },
          (e: unknown) => {
            this.failed++;
            if (!this.dirty.has(id)) this.markDirty(id, idHash(id));
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
