import { CatalogView, FollowStep, LiveWriter, LocalView, planFollow } from '../generations';
import { describeError } from '../errors';
import { Logger } from '../observability/logger';

/** What a runner does for each step of following the catalog. */
export interface FollowHandlers {
  stopBuild(): Promise<void>;
  promoteBuild(): Promise<void>;
  restartMain(generation: number): Promise<void>;
  joinBuild(generation: number): Promise<unknown>;
  pause(): void;
  resume(): void;
}

/** Collaborators of a catalog follower. */
export interface CatalogFollowerParts {
  /** The pipeline's catalog row and pause flag, read fresh. */
  view: () => Promise<CatalogView>;
  /** Every live writer of the pipeline. */
  writers: () => Promise<LiveWriter[]>;
  /** What this worker runs now. */
  local: () => LocalView;
  handlers: FollowHandlers;
  /** Runs a task swap exclusively (the runner's one-at-a-time queue). */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
  /** True once the runner stopped: a poll then does nothing. */
  stopped: () => boolean;
  log: Logger;
}

/**
 * Keeps one runner's tasks in line with the store catalog: every poll re-reads the store row and pause flag, plans the
 * steps (`planFollow`: drop a cancelled build, take over a switch or rollback done anywhere, join a build, pause or
 * resume) and applies them one at a time, then refreshes the list of live writers shown in status.
 */
export class CatalogFollower {
  private timer?: NodeJS.Timeout;
  private live: LiveWriter[] = [];

  constructor(private readonly p: CatalogFollowerParts) {}

  /** Every live writer of the pipeline, as of the last poll. */
  get writers(): LiveWriter[] {
    return this.live;
  }

  /** Polls every `pollMs` until stopped; a failed poll is logged and retried at the next one. */
  start(pollMs: number): void {
    this.timer = setInterval(() => this.followSoon(), pollMs);
  }

  /** Stops polling. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One poll: converges on the catalog, then refreshes the live writers. */
  follow(): Promise<void> {
    return this.p.exclusive(async () => {
      if (this.p.stopped()) return;
      await this.converge();
      this.live = await this.p.writers();
    });
  }

  /** Follows now rather than at the next poll (a generation this worker writes was retired, or its table is gone). */
  followSoon(): void {
    void this.follow().catch((e) => this.p.log.warn({ err: describeError(e) }, 'following the catalog failed; retrying at the next poll'));
  }

  /** Re-reads the catalog row and pause flag and applies the steps that bring the runner's tasks in line (call exclusively). */
  async converge(): Promise<void> {
    const steps = planFollow(await this.p.view(), this.p.local());
    for (const step of steps) await this.apply(step);
  }

  private async apply(step: FollowStep): Promise<void> {
    const h = this.p.handlers;
    if (step.kind !== 'pause' && step.kind !== 'resume')
      this.p.log.warn({ step: step.kind, generation: step.generation, current: this.p.local().main }, 'following the catalog');
    switch (step.kind) {
      case 'stopBuild':
        return h.stopBuild();
      case 'promoteBuild':
        return h.promoteBuild();
      case 'restartMain':
        return h.restartMain(step.generation);
      case 'joinBuild':
        await h.joinBuild(step.generation);
        return;
      case 'pause':
        return h.pause();
      case 'resume':
        return h.resume();
    }
  }
}
