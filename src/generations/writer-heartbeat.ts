import { describeError } from '../errors';
import type { Logger } from '../observability/logger';
import type { Generations } from './generations';
import type { WriterRole } from './worker-registry';

/**
 * The generations one worker's tasks of one pipeline may write right now (started, or still draining while they stop),
 * heartbeated into `adjunct_workers` before the first write and on a timer of its own, so a slow task swap never lets a
 * row expire while its task still writes.
 */
export class WriterHeartbeat {
  private readonly writing = new Map<number, WriterRole>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly generations: Generations,
    private readonly pipeline: string,
    private readonly workerId: string,
    private readonly log: Logger,
  ) {}

  /** Registers this worker as a writer of `generation` (awaited before any write into it). */
  writes(generation: number, role: WriterRole): Promise<void> {
    this.writing.set(generation, role);
    return this.generations.beat(this.pipeline, this.workerId, generation, role);
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

  private async beatAll(): Promise<void> {
    await Promise.all([...this.writing].map(([g, role]) => this.generations.beat(this.pipeline, this.workerId, g, role)));
  }
}
