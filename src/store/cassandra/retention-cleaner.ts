import type { RowListener } from '../types';
import { keyHash } from './key-hash';

/** Settings of the background retention clean-up. */
export interface RetentionCleanerOptions {
  /** Most keys tracked; past it the oldest is cleaned early, with a read (default 10,000). */
  maxDirtyKeys: number;
  /**
   * Most key bytes held, half for tracked keys and half for queued clean-ups (default 1 MiB per writer). Past it the
   * oldest tracked key is queued early, and a clean-up that finds the queue full is dropped (see maxQueued).
   */
  maxTrackedBytes?: number;
  /** Clean-ups running at once (default 4). */
  concurrency: number;
  /** Most clean-ups waiting; further ones are dropped (the key is cleaned when next tracked). Default 10,000. */
  maxQueued: number;
  /** Called with a failed clean-up's error (the key is tracked again). */
  onError?: (error: unknown) => void;
}

/** How the cleaner removes a key's expired versions (the store implements both). */
export interface RetentionActions {
  /** Blind: deletes every version of key older than `anchor`, a version known to be written and ≤ the horizon. */
  deleteBefore(key: Buffer, anchor: number): Promise<void>;
  /** With a read: finds the version valid at the current horizon and deletes everything older. */
  cleanAtHorizon(key: Buffer): Promise<void>;
}

/** Default byte budget of one cleaner (one writer). */
const DEFAULT_MAX_TRACKED_BYTES = 1 << 20;

/** A tracked key: the oldest version of it this writer wrote since its last clean-up (its anchor). */
interface Tracked extends Anchor {
  /** The encoded key as a latin1 string: the only copy of the key held (a Buffer is made again to clean it). */
  id: string;
  /** keyHash of the key's bytes (the lookup index's key). */
  hash: number;
  /** True once the anchor version is durable (only then may everything older be deleted blind). */
  written: boolean;
  /** False once the key left the tracker (cleaned, evicted or its anchor write failed); its FIFO slot is skipped. */
  live: boolean;
}

/** The anchor put of a tracked key, as track() returns it: report it with anchorWritten() or anchorFailed(). */
export interface Anchor {
  /** Timestamp of the anchor version. */
  readonly anchor: number;
}

/** A queued clean-up: blind below an anchor, or with a read at the horizon. */
interface Job {
  id: string;
  anchor?: number;
}

/** Whether the latin1 string id holds exactly the bytes of key. */
function sameKey(id: string, key: Buffer): boolean {
  if (id.length !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (id.charCodeAt(i) !== key[i]) return false;
  return true;
}

/**
 * Removes expired versions without reading in the steady state. The first put to a key after its last clean-up is the
 * key's anchor; once the horizon (as of the persisted stream time) reaches a durable anchor, every version older than
 * it has validTo ≤ anchor ≤ horizon, so one blind range delete `valid_from < anchor` removes them, and the key's next
 * put anchors it again. A key written at least once per retention period therefore costs one delete per retention
 * period and no read; it keeps at most about two retention periods of versions.
 * Bounded in memory (by key count and key bytes; each key is held once, as a latin1 string): past the bounds the oldest
 * tracked key is cleaned early with a read (the version valid at the horizon, then a range delete).
 * drain() (an explicit flush or close) cleans every tracked key with a read and waits for every clean-up.
 * A dropped clean-up only delays the physical removal of versions that reads already hide.
 */
export class RetentionCleaner {
  private readonly tracked = new Map<string, Tracked>();
  /** Tracked keys by keyHash (one per hash; on a collision the other key is still found in `tracked`). */
  private readonly byHash = new Map<number, Tracked>();
  /** Tracked keys in the order they were anchored (anchors are stream times, so close to ascending). */
  private fifo: Tracked[] = [];
  private head = 0;
  private readonly queue: Job[] = [];
  private readonly queued = new Set<string>();
  private readonly halfBudget: number;
  private trackedKeyBytes = 0;
  private queuedBytes = 0;
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** Number of clean-ups performed (for metrics and tests). */
  completed = 0;
  /** Clean-ups that needed a read (drain, eviction). */
  reads = 0;
  /** Number of failed clean-ups. */
  failed = 0;
  /** Number of clean-ups dropped because the queue was full (by count or bytes). */
  dropped = 0;

  constructor(
    private readonly actions: RetentionActions,
    private readonly options: RetentionCleanerOptions,
  ) {
    this.halfBudget = Math.floor((options.maxTrackedBytes ?? DEFAULT_MAX_TRACKED_BYTES) / 2);
  }

  /** Key bytes currently held by tracked keys and queued clean-ups (for tests and metrics). */
  get trackedBytes(): number {
    return this.trackedKeyBytes + this.queuedBytes;
  }

  /** Keys currently tracked. */
  get size(): number {
    return this.tracked.size;
  }

  /**
   * Records a put of key at timestamp (called in put order, before the write is durable; `hash` is keyHash(key) when the
   * caller has it). Returns the anchor when this put became the key's anchor: report it with anchorWritten() once it is
   * durable, anchorFailed() when it never will be.
   */
  track(key: Buffer, timestamp: number, hash = keyHash(key)): Anchor | undefined {
    const hit = this.byHash.get(hash);
    if (hit !== undefined && sameKey(hit.id, key)) return undefined;
    const id = key.toString('latin1');
    if (hit !== undefined && this.tracked.has(id)) return undefined;
    const t: Tracked = { id, hash, anchor: timestamp, written: false, live: true };
    this.tracked.set(id, t);
    this.byHash.set(hash, t);
    this.fifo.push(t);
    this.trackedKeyBytes += id.length;
    while (this.tracked.size > 1 && (this.tracked.size > this.options.maxDirtyKeys || this.trackedKeyBytes > this.halfBudget)) {
      const oldest = this.oldest();
      if (oldest === undefined || oldest === t) break;
      this.enqueue({ id: this.untrack(oldest) });
    }
    this.compact();
    return t;
  }

  /** Records a put that is already durable (the API's put and delete). */
  trackWritten(key: Buffer, timestamp: number): void {
    const a = this.track(key, timestamp);
    if (a !== undefined) this.anchorWritten(a);
  }

  /** Starts the blind clean-up of every key whose durable anchor is at or below horizon. */
  expireUpTo(horizon: number): void {
    if (!Number.isFinite(horizon)) return;
    while (this.head < this.fifo.length) {
      const t = this.fifo[this.head];
      if (!t.live) {
        this.head++;
        continue;
      }
      // Anchors are stream times in put order: the first one above the horizon (or still in flight) ends the scan.
      if (t.anchor > horizon || !t.written) break;
      this.head++;
      const anchor = t.anchor;
      this.enqueue({ id: this.untrack(t), anchor });
    }
    this.compact();
  }

  /** Cleans every tracked key (with a read) and resolves when no clean-up is running or queued. */
  async drain(): Promise<void> {
    for (const t of [...this.tracked.values()]) this.enqueue({ id: this.untrack(t) }, true);
    this.compact();
    if (this.running === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** The anchor version is durable: it may bound a blind delete. */
  anchorWritten(a: Anchor): void {
    (a as Tracked).written = true;
  }

  /** The anchor version will never be written (its record failed): the key's next put anchors it again. */
  anchorFailed(a: Anchor): void {
    const t = a as Tracked;
    if (t.live) this.untrack(t);
    this.compact();
  }

  /** Slots in the FIFO, live or left behind (for tests). */
  get fifoSlots(): number {
    return this.fifo.length - this.head;
  }

  private oldest(): Tracked | undefined {
    while (this.head < this.fifo.length && !this.fifo[this.head].live) this.head++;
    return this.fifo[this.head];
  }

  /** Forgets a tracked key and returns its id; the FIFO slot left behind no longer holds the key's bytes. */
  private untrack(t: Tracked): string {
    const id = t.id;
    if (!t.live) return id;
    t.live = false;
    this.tracked.delete(id);
    if (this.byHash.get(t.hash) === t) this.byHash.delete(t.hash);
    this.trackedKeyBytes -= id.length;
    t.id = '';
    return id;
  }

  /** Key bytes held by the FIFO's slots (live and left behind): equals the tracked keys' bytes (for tests). */
  get fifoKeyBytes(): number {
    let n = 0;
    for (let i = this.head; i < this.fifo.length; i++) n += this.fifo[i].id.length;
    return n;
  }

  /**
   * Drops the FIFO's consumed prefix once it is most of the array, and the slots keys left in its middle (failed
   * anchors) once they outnumber the tracked keys, so the FIFO stays within a constant factor of the tracked keys.
   */
  private compact(): void {
    if (this.fifo.length - this.head > 2 * this.tracked.size + 1024) {
      this.fifo = this.fifo.slice(this.head).filter((t) => t.live);
      this.head = 0;
    } else if (this.head > 64 && this.head * 2 > this.fifo.length) {
      this.fifo = this.fifo.slice(this.head);
      this.head = 0;
    }
  }

  private enqueue(job: Job, force = false): void {
    if (this.queued.has(job.id)) return;
    if (
      !force &&
      (this.queue.length >= this.options.maxQueued || (this.queue.length > 0 && this.queuedBytes + job.id.length > this.halfBudget))
    ) {
      this.dropped++;
      return;
    }
    this.queued.add(job.id);
    this.queue.push(job);
    this.queuedBytes += job.id.length;
    this.pump();
  }

  private pump(): void {
    while (this.running < this.options.concurrency && this.queue.length > 0) {
      const job = this.queue.shift() as Job;
      this.queued.delete(job.id);
      this.queuedBytes -= job.id.length;
      this.running++;
      const key = Buffer.from(job.id, 'latin1');
      if (job.anchor === undefined) this.reads++;
      const work = job.anchor === undefined ? this.actions.cleanAtHorizon(key) : this.actions.deleteBefore(key, job.anchor);
      work
        .then(
          () => {
            this.completed++;
          },
          (e: unknown) => {
            this.failed++;
            // Track the key again (anchored where it was), so a later expiry or drain retries the clean-up.
            if (job.anchor !== undefined) this.trackWritten(key, job.anchor);
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

  /** The listener of a put that anchors its key: it also tells this cleaner whether the anchor became durable. */
  anchorListener(anchor: Anchor, listener: RowListener): RowListener {
    return {
      rowWritten: () => {
        this.anchorWritten(anchor);
        listener.rowWritten();
      },
      rowFailed: (e) => {
        this.anchorFailed(anchor);
        listener.rowFailed(e);
      },
      abandoned: listener.abandoned?.bind(listener),
      revoked: listener.revoked?.bind(listener),
    };
  }
}
