import { Clock, systemClock } from '../clock';

/** Caches async results per key for at most ttlMs; concurrent callers share one in-flight load; failures are not cached. */
export class TtlMemo<T> {
  private readonly entries = new Map<string, { value: Promise<T>; expires: number }>();

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
    const entry = { value, expires: this.ttlMs > 0 ? t + this.ttlMs : t };
    if (this.ttlMs > 0) this.entries.set(key, entry);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    });
    return value;
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
