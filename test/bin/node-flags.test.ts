import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// bin/node-flags.js: the V8 flags `adjunct run` re-executes itself with (plain JS, loaded as the bin script loads it).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const flags = require(path.resolve(__dirname, '../../bin/node-flags.js')) as {
  availableCpus(): number;
  quotaCpus(cpuMax?: string, v1Quota?: string, v1Period?: string): number;
  missingNodeFlags(execArgv: string[], nodeOptions?: string, cpus?: number, env?: NodeJS.ProcessEnv): string[];
  DEFAULT_NODE_FLAGS: string[];
};

describe('bin/node-flags.js', () => {
  it('adds the heap bounds always, and a single-threaded GC only on one CPU', () => {
    expect(flags.missingNodeFlags([], undefined, 4)).toEqual([
      '--max-old-space-size=128',
      '--max-semi-space-size=16',
      '--heap-growing-percent=300',
    ]);
    expect(flags.missingNodeFlags([], undefined, 1)).toEqual([
      '--max-old-space-size=128',
      '--max-semi-space-size=16',
      '--heap-growing-percent=300',
      '--single-threaded-gc',
    ]);
  });

  it('leaves out what the command line sets or negates (--no-…) and the heap bounds NODE_OPTIONS sets, in either spelling', () => {
    expect(
      flags.missingNodeFlags(['--max_old_space_size=512', '--single-threaded-gc', '--heap-growing-percent=100'], undefined, 1),
    ).toEqual(['--max-semi-space-size=16']);
    expect(flags.missingNodeFlags(['--no-single-threaded-gc'], '--max-semi-space-size=32', 1)).toEqual([
      '--max-old-space-size=128',
      '--heap-growing-percent=300',
    ]);
  });

  it("ADJUNCT_SINGLE_THREADED_GC=0 keeps V8's GC helpers on one CPU (node refuses the flag in NODE_OPTIONS)", () => {
    expect(flags.missingNodeFlags([], undefined, 1, { ADJUNCT_SINGLE_THREADED_GC: '0' })).toEqual([
      '--max-old-space-size=128',
      '--max-semi-space-size=16',
      '--heap-growing-percent=300',
    ]);
  });

  it("reads a cgroup's CPU quota (v2 cpu.max, v1 quota/period); none or unreadable is unlimited", () => {
    expect(flags.quotaCpus('100000 100000')).toBe(1);
    expect(flags.quotaCpus('150000 100000')).toBe(1.5);
    expect(flags.quotaCpus('max 100000')).toBe(Infinity);
    expect(flags.quotaCpus(undefined, '50000', '100000')).toBe(0.5);
    expect(flags.quotaCpus(undefined, '-1', '100000')).toBe(Infinity);
    expect(flags.quotaCpus(undefined, undefined, undefined)).toBe(Infinity);
  });

  it('counts at least one CPU and no more than the process may use', () => {
    const n = flags.availableCpus();
    expect(n).toBeGreaterThanOrEqual(1);
    expect(n).toBeLessThanOrEqual(os.cpus().length);
  });

  it("the Docker image's NODE_OPTIONS and ENTRYPOINT give exactly the defaults, so the container's worker is not re-executed", () => {
    const dockerfile = fs.readFileSync(path.resolve(__dirname, '../../Dockerfile'), 'utf8');
    const nodeOptions = /^ENV NODE_OPTIONS="([^"]*)"/m.exec(dockerfile)?.[1];
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
    expect(entrypoint[0]).toBe('node');
    const execArgv = entrypoint.slice(1, entrypoint.indexOf('bin/adjunct.js'));
    expect([...(nodeOptions ?? '').split(' '), ...execArgv].sort()).toEqual([...flags.DEFAULT_NODE_FLAGS].sort());
    expect(flags.missingNodeFlags(execArgv, nodeOptions, 2)).toEqual([]);
  });
});
