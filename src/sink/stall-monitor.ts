import { Clock } from '../clock';
import { AdjunctError, describeError, publicErrorText } from '../errors';

/** Settings of a stall monitor. */
export interface StallMonitorOptions {
  pipeline: string;
  /** A failure lasting this long makes the pipeline STALLED. */
  retryTimeoutMs: number;
  /** A stall lasting this long fails the pipeline (STALL_TIMEOUT); undefined: never. */
  stallTimeoutMs: number | undefined;
}

/** The operation of failures reported without one (see StallMonitor.recovered). */
const UNNAMED = {};

/**
 * Tracks infrastructure failures of one pipeline (Cassandra, registry, DLQ) by operation: each retried operation (a
 * write batch, a record's conversion) is failing from its first failure until it settles (succeeds or gives up). The
 * pipeline is failing while any is, since the first failure of the oldest one: other operations that succeed meanwhile
 * (a partition whose replicas are up) do not hide one that keeps failing. STALLED after retryTimeout, expired after
 * stallTimeout.
 */
export class StallMonitor {
  /** First failure time of each operation failing now. */
  private readonly failingOps = new Map<object, number>();
  private lastCause: string | undefined;
  private expiredError: AdjunctError | null = null;
  private lastPublicCause?: string;
  /** Whether listeners were told STALLED (they hear each transition once). */
  private reported = false;
  private readonly listeners: ((stalled: boolean) => void)[] = [];

  constructor(
    private readonly o: StallMonitorOptions,
    private readonly clock: Clock,
  ) {}

  /** Since when the oldest failing operation has failed, or null. */
  private get since(): number | null {
    let first: number | null = null;
    for (const t of this.failingOps.values()) if (first === null || t < first) first = t;
    return first;
  }

  /** Called on every retried infrastructure failure of `op` (one object per retried operation). */
  failed(e: unknown, op: object = UNNAMED): void {
    const now = this.clock.now();
    if (!this.failingOps.has(op)) this.failingOps.set(op, now);
    const since = this.since!;
    this.lastCause = describeError(e);
    this.lastPublicCause = publicErrorText(e);
    if (this.stalled && !this.reported) this.notify(true);
    if (this.o.stallTimeoutMs !== undefined && now - since >= this.o.stallTimeoutMs && !this.expiredError) {
      this.expiredError = new AdjunctError(
        `pipeline ${this.o.pipeline} stalled for ${now - since} ms (errors.stallTimeout ${this.o.stallTimeoutMs} ms): ${this.lastCause}`,
        { code: 'STALL_TIMEOUT', stage: 'worker', cause: e },
      );
    }
  }

  /** A retried operation ended (it succeeded, or gave up and went to tolerance or a stop): it no longer fails. */
  settled(op: object): void {
    if (!this.failingOps.delete(op) || this.failingOps.size > 0) return;
    this.lastCause = undefined;
    if (this.reported) this.notify(false);
  }

  /** An operation that needs the infrastructure succeeded: clears failures reported without an operation. */
  recovered(): void {
    this.settled(UNNAMED);
  }

  /** Forgets the failure and an expired stallTimeout (a restarted task starts with a fresh budget). */
  reset(): void {
    this.failingOps.clear();
    this.lastCause = undefined;
    this.lastPublicCause = undefined;
    this.expiredError = null;
    if (this.reported) this.notify(false);
  }

  /** True from the first retried failure until the next success (before STALLED too). */
  get failing(): boolean {
    return this.failingOps.size > 0;
  }

  /** True while a failure has lasted at least retryTimeout. */
  get stalled(): boolean {
    const since = this.since;
    return since !== null && this.clock.now() - since >= this.o.retryTimeoutMs;
  }

  /** The last failure, while stalled. */
  get cause(): string | undefined {
    return this.stalled ? this.lastCause : undefined;
  }

  /** The last failure in public form (no driver internals; for /status), while stalled. */
  get publicCause(): string | undefined {
    return this.stalled ? this.lastPublicCause : undefined;
  }

  /** The STALL_TIMEOUT error once the stall outlasted errors.stallTimeout; retries stop then. */
  get expired(): AdjunctError | null {
    return this.expiredError;
  }

  /** Subscribes to STALLED on/off (metrics, logs). */
  onChange(listener: (stalled: boolean) => void): void {
    this.listeners.push(listener);
  }

  private notify(stalled: boolean): void {
    this.reported = stalled;
    for (const l of this.listeners) l(stalled);
  }
}
