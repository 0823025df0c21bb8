import { LOST_TABLE_CONFIRM_MS, LOST_TABLE_RECHECK_MS, LostTableWatch, LostTableWatchParts } from '../../src/worker/lost-table';
import { createLogger } from '../../src/observability/logger';
import type { PipelineTask } from '../../src/sink/pipeline-task';

/** A watch over fakes of the runner's parts: `exists` answers each table check in turn (the last one repeats). */
function watch(o: {
  current?: number;
  exists: boolean[];
  rebuildFails?: boolean;
  convergeFails?: number;
  /** A build of generation 4 runs here; `buildExists` answers its table checks (the main table's follow `exists`). */
  building?: boolean;
  buildExists?: boolean[];
  /** The main task is stopped (its table was lost: the store is being rebuilt). */
  noMain?: boolean;
}) {
  const lines: string[] = [];
  const calls: string[] = [];
  const exists = [...o.exists];
  const buildExists = [...(o.buildExists ?? [true])];
  const buildTask = { stop: jest.fn(async () => void calls.push('stop build')) } as unknown as PipelineTask;
  let queue: Promise<unknown> = Promise.resolve();
  const task = { stop: jest.fn(async () => void calls.push('stop')) } as unknown as PipelineTask;
  const parts: LostTableWatchParts = {
    exclusive: (fn) => {
      const next = queue.then(fn);
      queue = next.catch(() => undefined);
      return next;
    },
    converge: async () => {
      calls.push('converge');
      if ((o.convergeFails ?? 0) > 0) {
        o.convergeFails!--;
        throw new Error('no schema agreement');
      }
    },
    main: () => (o.noMain ? undefined : { generation: 3, task }),
    build: () => (o.building ? { generation: 4, task: buildTask } : undefined),
    replaceBuild: async (lost) => void calls.push(`replaceBuild ${lost}`),
    view: async () => ({ current: o.current ?? 3, building: o.building ? 4 : null, paused: false }),
    tableExists: async (g) => {
      if (g === 4) {
        calls.push('build exists?');
        return buildExists.length > 1 ? buildExists.shift()! : buildExists[0];
      }
      calls.push('exists?');
      return exists.length > 1 ? exists.shift()! : exists[0];
    },
    sleep: async (ms) => void calls.push(`sleep ${ms}`),
    rebuild: async () => {
      calls.push('rebuild');
      if (o.rebuildFails) throw new Error('Cassandra unavailable');
    },
    fatal: (e) => void calls.push(`fatal ${e.code}: ${e.message}`),
    shutdownTimeoutMs: 1000,
    log: createLogger('info', { write: (l: string) => lines.push(l) }),
    store: 'rates',
  };
  const w = new LostTableWatch(parts);
  const settled = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  return { w, calls, lines, settled };
}

describe('LostTableWatch', () => {
  it('a current table missing, and still missing after the confirmation delay: the main task stops and the store is rebuilt, once', async () => {
    const { w, calls, lines, settled } = watch({ exists: [false] });
    w.report();
    w.report(); // a second write reporting the same table while the check runs
    await settled();
    expect(calls).toEqual(['converge', 'exists?', `sleep ${LOST_TABLE_CONFIRM_MS}`, 'exists?', 'stop', 'rebuild']);
    const lost = lines.map((l) => JSON.parse(l)).find((l) => /STORE TABLE LOST/.test(l.msg));
    expect(lost).toMatchObject({ level: 50, generation: 3, store: 'rates' });
  });

  it('a rebuild that cannot begin fails the pipeline (RELOAD_FAILED) instead of leaving it stopped', async () => {
    const { w, calls, settled } = watch({ exists: [false], rebuildFails: true });
    expect(w.isLost(3)).toBe(false);
    w.report();
    await settled();
    expect(calls.slice(-3)).toEqual([
      'stop',
      'rebuild',
      'fatal RELOAD_FAILED: rebuilding store rates after its table was lost failed: Error: Cassandra unavailable',
    ]);
    expect(w.isLost(3)).toBe(true);
    expect(w.isLost(4)).toBe(false);
  });

  it('a table that shows up within the delay (created by another worker) is not lost', async () => {
    const { w, calls, settled } = watch({ exists: [false, true] });
    w.report();
    await settled();
    expect(calls).toEqual(['converge', 'exists?', `sleep ${LOST_TABLE_CONFIRM_MS}`, 'exists?']);
  });

  it('a generation the catalog has retired is only followed, never rebuilt', async () => {
    const { w, calls, settled } = watch({ current: 4, exists: [false] });
    w.report();
    await settled();
    expect(calls).toEqual(['converge']);
  });

  it('an existing table: nothing happens after the follow', async () => {
    const { w, calls, settled } = watch({ exists: [true] });
    w.report();
    await settled();
    expect(calls).toEqual(['converge', 'exists?']);
  });

  it('a check that fails runs again by itself after LOST_TABLE_RECHECK_MS (writes report only once), and not after close()', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    try {
      const { w, calls, lines, settled } = watch({ exists: [false], convergeFails: 1 });
      w.report();
      await settled();
      expect(calls).toEqual(['converge']);
      expect(lines.some((l) => /checking a missing table failed; checking again/.test(l))).toBe(true);
      jest.advanceTimersByTime(LOST_TABLE_RECHECK_MS);
      await settled();
      expect(calls).toEqual(['converge', 'converge', 'exists?', `sleep ${LOST_TABLE_CONFIRM_MS}`, 'exists?', 'stop', 'rebuild']);

      const second = watch({ exists: [false], convergeFails: 1 });
      second.w.report();
      await second.settled();
      second.w.close();
      jest.advanceTimersByTime(LOST_TABLE_RECHECK_MS);
      await second.settled();
      expect(second.calls).toEqual(['converge']);
    } finally {
      jest.useRealTimers();
    }
  });

  it("a lost build table: the build is replaced by a new generation's (never re-created); the current table is checked too", async () => {
    const { w, calls, settled } = watch({ exists: [true], building: true, buildExists: [false] });
    w.report();
    await settled();
    // The replacement (GenerationBuild.replaceLost) logs BUILD TABLE LOST, whichever check found the table gone: asserted in generation-build.test.ts.
    expect(calls).toEqual(['converge', 'build exists?', `sleep ${LOST_TABLE_CONFIRM_MS}`, 'build exists?', 'replaceBuild 4', 'exists?']);
    expect(w.isLost(3)).toBe(false);
  });

  it('a build table that shows up within the delay (created by the worker that began the build) is not lost', async () => {
    const { w, calls, settled } = watch({ exists: [true], building: true, buildExists: [false, true] });
    w.report();
    await settled();
    expect(calls).toEqual(['converge', 'build exists?', `sleep ${LOST_TABLE_CONFIRM_MS}`, 'build exists?', 'exists?']);
  });

  it("the rebuild's own table lost while the main task is stopped (after STORE TABLE LOST) is still replaced", async () => {
    const { w, calls, settled } = watch({ exists: [false], noMain: true, building: true, buildExists: [false] });
    w.report();
    await settled();
    expect(calls).toEqual(['converge', 'build exists?', `sleep ${LOST_TABLE_CONFIRM_MS}`, 'build exists?', 'replaceBuild 4']);
  });
});
