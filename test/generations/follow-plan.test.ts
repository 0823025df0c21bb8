import { heartbeatTtlSeconds, planFollow, stillWritten } from '../../src/generations/follow-plan';
import type { LiveWriter } from '../../src/generations/worker-registry';

const kinds = (steps: ReturnType<typeof planFollow>) => steps.map((s) => ('generation' in s ? `${s.kind}:${s.generation}` : s.kind));

describe('planFollow: a worker converges on what the catalog says', () => {
  it('in step with the catalog: nothing to do', () => {
    expect(planFollow({ current: 1, building: null, paused: false }, { main: 1, build: undefined, paused: false })).toEqual([]);
    expect(planFollow({ current: 1, building: 2, paused: false }, { main: 1, build: 2, paused: false })).toEqual([]);
  });

  it('a reload started elsewhere: the worker joins the building generation', () => {
    expect(kinds(planFollow({ current: 1, building: 2, paused: false }, { main: 1, build: undefined, paused: false }))).toEqual([
      'joinBuild:2',
    ]);
  });

  it('the switch done by another worker: the local build becomes the main task', () => {
    expect(kinds(planFollow({ current: 2, building: null, paused: false }, { main: 1, build: 2, paused: false }))).toEqual([
      'promoteBuild:2',
    ]);
  });

  it('a worker that missed the whole build moves its main task to the new current generation', () => {
    expect(kinds(planFollow({ current: 2, building: null, paused: false }, { main: 1, build: undefined, paused: false }))).toEqual([
      'restartMain:2',
    ]);
  });

  it('a rollback during a build: the build stops and the main task moves back', () => {
    expect(kinds(planFollow({ current: 1, building: null, paused: false }, { main: 2, build: 3, paused: false }))).toEqual([
      'stopBuild:3',
      'restartMain:1',
    ]);
  });

  it('a cancelled build is stopped; a replaced build is stopped and the new one joined', () => {
    expect(kinds(planFollow({ current: 1, building: null, paused: false }, { main: 1, build: 2, paused: false }))).toEqual(['stopBuild:2']);
    expect(kinds(planFollow({ current: 1, building: 3, paused: false }, { main: 1, build: 2, paused: false }))).toEqual([
      'stopBuild:2',
      'joinBuild:3',
    ]);
  });

  it('the persisted pause flag is applied both ways, before the generation steps (a build joined while paused starts paused)', () => {
    expect(kinds(planFollow({ current: 1, building: 2, paused: true }, { main: 1, build: undefined, paused: false }))).toEqual([
      'pause',
      'joinBuild:2',
    ]);
    expect(kinds(planFollow({ current: 2, building: null, paused: false }, { main: 1, build: undefined, paused: true }))).toEqual([
      'resume',
      'restartMain:2',
    ]);
    expect(kinds(planFollow({ current: 1, building: null, paused: false }, { main: 1, build: undefined, paused: true }))).toEqual([
      'resume',
    ]);
  });

  it('before the main task exists only the build and pause are followed', () => {
    expect(kinds(planFollow({ current: 2, building: 3, paused: true }, { main: undefined, build: undefined, paused: false }))).toEqual([
      'pause',
      'joinBuild:3',
    ]);
  });

  it('applying the plan reaches a fixpoint: planning again on the resulting state yields nothing', () => {
    const catalogs = [
      { current: 1, building: null, paused: false },
      { current: 2, building: 3, paused: true },
      { current: 3, building: null, paused: false },
    ];
    for (const c of catalogs) {
      for (const main of [1, 2, 3]) {
        for (const build of [undefined, 2, 3, 4]) {
          for (const paused of [false, true]) {
            let l = { main: main as number | undefined, build: build as number | undefined, paused };
            for (const s of planFollow(c, l)) {
              if (s.kind === 'stopBuild') l = { ...l, build: undefined };
              if (s.kind === 'promoteBuild') l = { ...l, main: s.generation, build: undefined };
              if (s.kind === 'restartMain') l = { ...l, main: s.generation };
              if (s.kind === 'joinBuild') l = { ...l, build: s.generation };
              if (s.kind === 'pause') l = { ...l, paused: true };
              if (s.kind === 'resume') l = { ...l, paused: false };
            }
            expect(planFollow(c, l)).toEqual([]);
            expect(l.main).toBe(c.current);
            expect(l.build).toBe(c.building ?? undefined);
          }
        }
      }
    }
  });
});

describe('dropping a generation', () => {
  const w = (worker: string, generation: number): LiveWriter => ({ pipeline: 'p', worker, generation, role: 'current', updatedAt: null });

  it('a generation any live worker still writes is kept', () => {
    expect(stillWritten(1, [w('a', 2), w('b', 1)])).toBe(true);
    expect(stillWritten(1, [w('a', 2), w('b', 2)])).toBe(false);
    expect(stillWritten(1, [])).toBe(false);
  });

  it('the heartbeat TTL spans three polls, at least 10 s', () => {
    expect(heartbeatTtlSeconds(2_000)).toBe(10);
    expect(heartbeatTtlSeconds(5_000)).toBe(15);
  });
});
