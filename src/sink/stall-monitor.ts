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

/**
 * Tracks infrastructure failures of one pipeline (Cassandra, registry, DLQ): the time of the first failure since
 * the last success. Retries report here; a success clears it. STALLED after retryTimeout, expired after stallTimeout.
 */
export class StallMonitor {
  private since: number | null = null;
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

  /** Called on every retried infrastructure failure. */
  failed(e: unknown): void {
    const now = this.clock.now();
    this.since ??= now;
    this.lastCause = describeError(e);
    this.lastPublicCause = publicErrorText(e);
    if (this.stalled && !this.reported) this.notify(true);
    if (this.o.stallTimeoutMs !== undefined && now - this.since >= this.o.stallTimeoutMs && !this.expiredError) {
      this.expiredError = new AdjunctError(
        `pipeline ${this.o.pipeline} stalled for ${now - this.since} ms (errors.stallTimeout ${this.o.stallTimeoutMs} ms): ${this.lastCause}`,
        { code: 'STALL_TIMEOUT', stage: 'worker', cause: e },
      );
    }
  }

  /** Called when an operation that needs the infrastructure succeeded. */
  recovered(): void {
    if (this.since === null) return;
    this.since = null;
    this.lastCause = undefined;
    if (this.reported) this.notify(false);
  }

  /** Forgets the failure and an expired stallTimeout (a restarted task starts with a fresh budget). */
  reset(): void {
    this.since = null;
    this.lastCause = undefined;
    this.lastPublicCause = undefined;
    this.expiredError = null;
    if (this.reported) this.notify(false);
  }

  /** True from the first retried failure until the next success (before STALLED too). */
  get failing(): boolean {
    return this.since !== null;
  }

  /** True while a failure has lasted at least retryTimeout. */
  get stalled(): boolean {
    return this.since !== null && this.clock.now() - this.since >= this.o.retryTimeoutMs;
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
