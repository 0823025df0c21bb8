import type { LiveWriter } from './worker-registry';

/** What the catalog says about a pipeline's generations. */
export interface CatalogView {
  current: number;
  building: number | null;
  paused: boolean;
}

/** What one worker runs for a pipeline. */
export interface LocalView {
  /** Generation its main task writes (undefined before start). */
  main: number | undefined;
  /** Generation its build task writes, if any. */
  build: number | undefined;
  paused: boolean;
}

/** One step a worker takes to follow the catalog. */
export type FollowStep =
  | { kind: 'stopBuild'; generation: number }
  | { kind: 'promoteBuild'; generation: number }
  | { kind: 'restartMain'; generation: number }
  | { kind: 'joinBuild'; generation: number }
  | { kind: 'pause' }
  | { kind: 'resume' };

/**
 * The steps that make a worker write exactly what the catalog says, in order: drop a cancelled build, take over a
 * build that became current (switched by any worker), move the main task to the current generation (a rollback),
 * join a build started anywhere, then apply the persisted pause flag.
 */
export function planFollow(c: CatalogView, l: LocalView): FollowStep[] {
  // Pause and resume come first: every task the later steps start then starts in the pipeline's state (paused before it fetches).
  const steps: FollowStep[] = [];
  if (c.paused && !l.paused) steps.push({ kind: 'pause' });
  if (!c.paused && l.paused) steps.push({ kind: 'resume' });
  let build = l.build;
  let main = l.main;
  if (build !== undefined && build !== c.building && build !== c.current) {
    steps.push({ kind: 'stopBuild', generation: build });
    build = undefined;
  }
  if (build !== undefined && build === c.current) {
    steps.push({ kind: 'promoteBuild', generation: build });
    main = build;
    build = undefined;
  }
  if (main !== undefined && main !== c.current) steps.push({ kind: 'restartMain', generation: c.current });
  if (c.building !== null && c.building !== c.current && build !== c.building) steps.push({ kind: 'joinBuild', generation: c.building });
  return steps;
}

/** True when some live worker still writes `generation`: its table must stay. */
export function stillWritten(generation: number, writers: readonly LiveWriter[]): boolean {
  return writers.some((w) => w.generation === generation);
}

/** Heartbeat TTL for a poll interval: three missed polls (at least 10 s) before a silent worker counts as dead. */
export function heartbeatTtlSeconds(pollMs: number): number {
  return Math.max(10, Math.ceil((3 * pollMs) / 1000));
}
