import { AdjunctError } from '../../src/errors';
import { createLogger } from '../../src/observability/logger';
import type { ReadyTracker } from '../../src/generations';
import type { PipelineTask } from '../../src/sink/pipeline-task';
import { BuildingGeneration, GenerationBuild, GenerationBuildParts } from '../../src/worker/generation-build';
import { CatalogFollower } from '../../src/worker/catalog-follower';

type SwitchResult = { previous: number | null; applied: boolean };

/** A build over fakes of the runner's parts; each started build's READY is resolved by hand (`ready(g)`). */
function harness(
  o: {
    exists?: Array<boolean | Error>;
    startFails?: Error;
    forgetFails?: boolean;
    replaceWith?: number | null;
    /** Answers of successive switches (an Error is thrown); once used up, the switch applies. */
    switches?: Array<SwitchResult | Error | (() => SwitchResult | Error)>;
  } = {},
) {
  const lines: Array<Record<string, unknown>> = [];
  const calls: string[] = [];
  const readiness = new Map<number, () => void>();
  const exists = [...(o.exists ?? [true])];
  let begun = 4;
  let stopped = false;
  let queue: Promise<unknown> = Promise.resolve();
  const promoted: BuildingGeneration[] = [];
  const failures: unknown[] = [];
  const sleeps: number[] = [];
  /** The fake catalog row the real CatalogFollower follows (current 3, no build, until begin). */
  const catalog = { current: 3, building: null as number | null };
  const switches = [...(o.switches ?? [])];
  const parts: GenerationBuildParts = {
    store: 'rates',
    generations: {
      begin: async () => {
        calls.push('begin');
        catalog.building ??= begun++;
        return catalog.building;
      },
      replaceBuild: async (_store, lost) => {
        calls.push(`replaceBuild ${lost}`);
        return o.replaceWith === undefined ? begun++ : o.replaceWith;
      },
      switchTo: async (_store, g) => {
        calls.push(`switchTo ${g}`);
        const next = switches.shift();
        const answer = typeof next === 'function' ? next() : next;
        if (answer instanceof Error) throw answer;
        if (answer) return answer;
        catalog.current = g;
        catalog.building = null;
        return { previous: 3, applied: true };
      },
    },
    startBuild: async (g, paused) => {
      calls.push(`startBuild ${g}${paused ? ' paused' : ''}`);
      if (o.startFails) throw o.startFails;
      const ready = new Promise<void>((resolve) => readiness.set(g, resolve));
      const tracker = { ready, stop: jest.fn(() => void calls.push(`tracker.stop ${g}`)) } as unknown as ReadyTracker;
      const task = { stop: jest.fn(async () => void calls.push(`task.stop ${g}`)) } as unknown as PipelineTask;
      return { task, tracker };
    },
    writes: async (g, role) => void calls.push(`writes ${g} ${role}`),
    forget: async (g) => {
      calls.push(`forget ${g}`);
      if (o.forgetFails) throw new Error('Cassandra unavailable');
    },
    tableExists: async (g) => {
      calls.push(`exists? ${g}`);
      const answer = exists.length > 1 ? exists.shift()! : exists[0];
      if (answer instanceof Error) throw answer;
      return answer;
    },
    keepPreviousGeneration: 1000,
    current: () => 3,
    paused: () => false,
    stopped: () => stopped,
    exclusive: (fn) => {
      const next = queue.then(fn);
      queue = next.catch(() => undefined);
      return next;
    },
    promote: async (b) => void promoted.push(b),
    follow: () => {
      calls.push('follow');
      return follower().converge();
    },
    sleep: async (ms) => void sleeps.push(ms),
    fail: (e) => void failures.push(e),
    shutdownTimeoutMs: 1000,
    log: createLogger('info', { write: (l: string) => lines.push(JSON.parse(l)) }),
  };
  const build = new GenerationBuild(parts);
  const follower = () => theFollower;
  let main = 3;
  const theFollower = new CatalogFollower({
    view: async () => ({ ...catalog, paused: false }),
    writers: async () => [],
    local: () => ({ main, build: build.active?.generation, paused: false }),
    handlers: {
      stopBuild: () => build.stop(),
      promoteBuild: async () => {
        main = build.active!.generation;
        await build.promote();
      },
      restartMain: async (g) => void calls.push(`restartMain ${g}`),
      joinBuild: (g) => build.join(g),
      pause: () => undefined,
      resume: () => undefined,
    },
    exclusive: parts.exclusive,
    stopped: () => stopped,
    log: parts.log,
  });
  /** Resolves generation `g`'s READY and lets the switch it triggers run. */
  const ready = async (g: number) => {
    readiness.get(g)!();
    for (let i = 0; i < 10; i++) await queue.then(() => new Promise((r) => setImmediate(r)));
  };
  return { build, calls, lines, promoted, failures, sleeps, catalog, ready, stop: () => (stopped = true) };
}

describe('GenerationBuild', () => {
  it('begins a generation, joins its build, and once READY checks its table, switches the store and promotes it', async () => {
    const h = harness();
    expect(await h.build.begin()).toBe(4);
    expect(h.build.active?.generation).toBe(4);
    // A second begin while building returns the build running here rather than begin another generation.
    expect(await h.build.begin()).toBe(4);
    await h.ready(4);
    expect(h.calls).toEqual(['begin', 'writes 4 building', 'startBuild 4', 'exists? 4', 'switchTo 4']);
    expect(h.promoted.map((b) => b.generation)).toEqual([4]);
    expect(h.build.active).toBeUndefined();
    expect(h.lines.find((l) => l.msg === 'reload complete: store switched to the new generation')).toMatchObject({
      generation: 4,
      previous: 3,
    });
  });

  it('replaces a READY build whose table is missing instead of switching readers to it, and logs BUILD TABLE LOST once', async () => {
    const h = harness({ exists: [false, true] });
    await h.build.begin();
    await h.ready(4);
    expect(h.calls).toEqual([
      'begin',
      'writes 4 building',
      'startBuild 4',
      'exists? 4',
      'tracker.stop 4',
      'task.stop 4',
      'forget 4',
      'replaceBuild 4',
      'writes 5 building',
      'startBuild 5',
    ]);
    const lost = h.lines.filter((l) => String(l.msg).startsWith('BUILD TABLE LOST'));
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ level: 50, generation: 4, store: 'rates' });
    expect(lost[0].msg).toContain('the built generation has no table');
    expect(h.build.active?.generation).toBe(5);
    await h.ready(5);
    expect(h.calls.slice(-2)).toEqual(['exists? 5', 'switchTo 5']);
    expect(h.promoted.map((b) => b.generation)).toEqual([5]);
  });

  it('replaces a build whose table was dropped (the lost-table watch) and joins nothing when another worker replaced it first', async () => {
    const h = harness({ replaceWith: null });
    await h.build.begin();
    await h.build.replaceLost(4, 'the table of the generation being built was dropped outside adjunct');
    expect(h.calls.slice(3)).toEqual(['tracker.stop 4', 'task.stop 4', 'forget 4', 'replaceBuild 4']);
    expect(h.build.active).toBeUndefined();
    expect(h.lines.filter((l) => l.level === 50).map((l) => l.generation)).toEqual([4]);
  });

  it('switches, with a warning, when the table check cannot be made', async () => {
    const h = harness({ exists: [new Error('no schema agreement')] });
    await h.build.begin();
    await h.ready(4);
    expect(h.calls).toContain('switchTo 4');
    expect(h.promoted).toHaveLength(1);
    expect(h.lines.find((l) => l.level === 40 && String(l.msg).includes('could not be checked'))).toMatchObject({
      generation: 4,
      err: expect.stringContaining('no schema agreement'),
    });
  });

  it('neither switches nor promotes once the runner stopped', async () => {
    const h = harness();
    await h.build.begin();
    h.stop();
    await h.ready(4);
    expect(h.calls).not.toContain('switchTo 4');
    expect(h.promoted).toHaveLength(0);
  });

  it('leaves nothing behind when a build fails to start, and says so when its heartbeat cannot be removed', async () => {
    const h = harness({ startFails: new Error('boom'), forgetFails: true });
    await expect(h.build.join(4)).rejects.toThrow('boom');
    expect(h.calls).toEqual(['writes 4 building', 'startBuild 4', 'forget 4']);
    expect(h.build.active).toBeUndefined();
    expect(h.lines.find((l) => l.level === 40 && String(l.msg).includes('heartbeat could not be removed'))).toMatchObject({
      generation: 4,
      err: expect.stringContaining('Cassandra unavailable'),
    });
  });

  it('keeps a begun reload when joining it fails retriably (the next catalog poll joins it), and fails on other errors', async () => {
    const retriable = harness({ startFails: new AdjunctError('Kafka unavailable', { code: 'KAFKA_UNAVAILABLE', stage: 'consume' }) });
    expect(await retriable.build.begin()).toBe(4);
    expect(retriable.lines.find((l) => String(l.msg).startsWith('joining the build failed'))).toMatchObject({ generation: 4 });
    const fatal = harness({ startFails: new Error('bad config') });
    await expect(fatal.build.begin()).rejects.toThrow('bad config');
  });

  const conflict = () => new AdjunctError('generation switch lost a race', { code: 'SWITCH_CONFLICT', stage: 'store', retriable: true });
  const timedOut = () =>
    new AdjunctError('switching generation: Operation timed out', { code: 'CASSANDRA_UNAVAILABLE', stage: 'store', retriable: true });
  /** A switch answered `reply` after another worker had switched the store to generation 4 (the build done). */
  const switchedElsewhere = (catalog: { current: number; building: number | null }, reply: Error): Error => {
    catalog.current = 4;
    catalog.building = null;
    return reply;
  };

  describe('at start, with a build seen in progress', () => {
    it('joins it when the catalog still builds it, without beginning anything', async () => {
      const h = harness();
      h.catalog.building = 4;
      await h.build.atStart(false, true);
      expect(h.calls).toEqual(['follow', 'writes 4 building', 'startBuild 4']);
      expect(h.build.active?.generation).toBe(4);
    });

    it("begins no build when it was cancelled meanwhile (the operator's cancel stands)", async () => {
      const h = harness();
      h.catalog.building = null; // seen building 4, cancelled while the main task joined its group
      await h.build.atStart(false, true);
      expect(h.calls).toEqual(['follow']);
      expect(h.build.active).toBeUndefined();
      expect(h.catalog).toEqual({ current: 3, building: null });
    });

    it('follows a switch made meanwhile by another worker instead of beginning the next generation', async () => {
      const h = harness();
      h.catalog.current = 4;
      await h.build.atStart(false, true);
      expect(h.calls).toEqual(['follow', 'restartMain 4']);
      expect(h.build.active).toBeUndefined();
    });

    it('begins a build when one is asked for (resetOffset, lost offsets)', async () => {
      const h = harness();
      await h.build.atStart(true, false);
      expect(h.calls.slice(0, 2)).toEqual(['begin', 'writes 4 building']);
      expect(h.build.active?.generation).toBe(4);
    });

    it('keeps going when following fails retriably (the next poll joins), and throws other failures', async () => {
      const h = harness({ startFails: timedOut() });
      h.catalog.building = 4;
      await h.build.atStart(false, true);
      expect(h.lines.find((l) => String(l.msg).startsWith('following the build in progress failed'))).toBeDefined();
      const fatal = harness({ startFails: new Error('bad config') });
      fatal.catalog.building = 4;
      await expect(fatal.build.atStart(false, true)).rejects.toThrow('bad config');
    });
  });

  describe('a switch that does not apply, or whose outcome is unknown', () => {
    it('stops the build without failing when the build was cancelled before the switch (SWITCH_CONFLICT)', async () => {
      const h = harness({
        switches: [
          () => {
            h.catalog.building = null;
            return conflict();
          },
        ],
      });
      await h.build.begin();
      await h.ready(4);
      expect(h.failures).toEqual([]);
      expect(h.promoted).toEqual([]);
      expect(h.build.active).toBeUndefined();
      expect(h.calls.slice(-5)).toEqual(['switchTo 4', 'follow', 'tracker.stop 4', 'task.stop 4', 'forget 4']);
      expect(h.sleeps).toEqual([]);
    });

    it('promotes the build when another worker switched to it first', async () => {
      const h = harness({ switches: [() => switchedElsewhere(h.catalog, conflict())] });
      await h.build.begin();
      await h.ready(4);
      expect(h.failures).toEqual([]);
      expect(h.promoted.map((b) => b.generation)).toEqual([4]);
      expect(h.build.active).toBeUndefined();
    });

    it('tries the switch again after a backoff when its outcome is unknown and the build is still building', async () => {
      const h = harness({ switches: [timedOut(), timedOut()] });
      await h.build.begin();
      await h.ready(4);
      expect(h.failures).toEqual([]);
      expect(h.sleeps).toEqual([1000, 2000]);
      expect(h.calls.filter((c) => c === 'switchTo 4')).toHaveLength(3);
      expect(h.promoted.map((b) => b.generation)).toEqual([4]);
      expect(h.catalog).toEqual({ current: 4, building: null });
    });

    it('promotes when a timed-out switch had in fact applied', async () => {
      const h = harness({ switches: [() => switchedElsewhere(h.catalog, timedOut())] });
      await h.build.begin();
      await h.ready(4);
      expect(h.failures).toEqual([]);
      expect(h.sleeps).toEqual([]);
      expect(h.promoted.map((b) => b.generation)).toEqual([4]);
    });

    it('still fails the reload on a failure no retry fixes', async () => {
      const bad = new AdjunctError('syntax error', { code: 'CASSANDRA_ERROR', stage: 'store' });
      const h = harness({ switches: [bad] });
      await h.build.begin();
      await h.ready(4);
      expect(h.failures).toEqual([bad]);
    });
  });
});
