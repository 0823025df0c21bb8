import { Clock, systemClock } from '../clock';

/** A cached load: its promise, when it expires, and its value once it has settled. */
interface MemoEntry<T> {
  value: Promise<T>;
  expires: number;
  settled?: { value: T };
}

/** Caches async results per key for at most ttlMs; concurrent callers share one in-flight load; failures are not cached. */
export class TtlMemo<T> {
  private readonly entries = new Map<string, MemoEntry<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The cached value of key, or the result of load() (cached until ttlMs from now). */
  get(key: string, load: () => Promise<T>): Promise<T> {
    const t = this.clock.now();
    const hit = this.entries.get(key);
    if (hit && hit.expires > t) return hit.value;
    const value = load();
    const entry: MemoEntry<T> = { value, expires: this.ttlMs > 0 ? t + this.ttlMs : t };
    if (this.ttlMs > 0) this.entries.set(key, entry);
    value.then(
      (v) => {
        entry.settled = { value: v };
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return value;
  }

  /** The cached value of key when it is loaded and fresh (what get would resolve to, without a promise); else undefined. */
  peek(key: string): { value: T } | undefined {
    const hit = this.entries.get(key);
    return hit?.settled !== undefined && hit.expires > this.clock.now() ? hit.settled : undefined;
  }

  /** Forgets key (next get loads again). */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets everything. */
  clear(): void {
    this.entries.clear();
  }
}
