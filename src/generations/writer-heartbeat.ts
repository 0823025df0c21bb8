import { AdjunctError, describeError } from '../errors';
import type { Logger } from '../observability/logger';
import type { Generations } from './generations';
import type { WriterRole } from './worker-registry';

/**
 * The generations one worker's tasks of one pipeline may write right now (started, or still draining while they stop),
 * registered in `adjunct_workers` before the first write and on a timer of its own, so a slow task swap never lets a
 * row expire while its task still writes. Each registration re-checks the catalog: a generation retired meanwhile
 * (being dropped, dropped, cancelled) is reported through `onRetired`, and the worker re-follows the catalog.
 */
export class WriterHeartbeat {
  private readonly writing = new Map<number, WriterRole>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly generations: Generations,
    private readonly pipeline: string,
    private readonly store: string,
    private readonly workerId: string,
    private readonly log: Logger,
    private readonly onRetired: (generation: number) => void = () => undefined,
  ) {}

  /**
   * Registers this worker as a writer of `generation` (awaited before any write into it). Throws GENERATION_RETIRED
   * when the catalog retired it; a generation this worker did not write yet is then forgotten at once.
   */
  async writes(generation: number, role: WriterRole): Promise<void> {
    const already = this.writing.has(generation);
    this.writing.set(generation, role);
    try {
      await this.register(generation, role);
    } catch (e) {
      if (!already && retired(e)) await this.stopped(generation);
      throw e;
    }
  }

  /** This worker's tasks no longer write `generation`: its row is deleted (or expires by TTL if that fails). */
  async stopped(generation: number): Promise<void> {
    this.writing.delete(generation);
    await this.generations
      .forget(this.pipeline, this.workerId, generation)
      .catch((e) =>
        this.log.warn({ generation, err: describeError(e) }, 'unregistering a generation failed; its heartbeat expires by TTL'),
      );
  }

  /** Refreshes every row every `everyMs`. */
  start(everyMs: number): void {
    this.timer = setInterval(
      () =>
        void this.beatAll().catch((e) => this.log.warn({ err: describeError(e) }, 'worker heartbeat failed; retrying at the next poll')),
      everyMs,
    );
  }

  /** Stops the timer and deletes every row of this worker (its tasks have stopped). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const gone = [...this.writing.keys()];
    this.writing.clear();
    await Promise.all(gone.map((g) => this.generations.forget(this.pipeline, this.workerId, g).catch(() => undefined)));
  }

  private register(generation: number, role: WriterRole): Promise<void> {
    return this.generations.register({ pipeline: this.pipeline, store: this.store, worker: this.workerId, generation, role });
  }

  private async beatAll(): Promise<void> {
    await Promise.all(
      [...this.writing].map(async ([g, role]) => {
        try {
          await this.register(g, role);
        } catch (e) {
          if (!retired(e)) throw e;
          // The row stays until the task stops writing (the runner's follow stops it and calls stopped()).
          this.log.warn({ generation: g }, 'generation retired in the catalog while this worker writes it: following the catalog now');
          this.onRetired(g);
        }
      }),
    );
  }
}

const retired = (e: unknown) => e instanceof AdjunctError && e.code === 'GENERATION_RETIRED';
