/** Spawning the adjunct worker as a child process (bundled with esbuild when available) and sampling its memory. */
import { ChildProcess, spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { repoRoot } from '../devstack/endpoints';

/** How the child runs: a plain-node esbuild bundle (no loader overhead in RSS/profile) or through tsx. */
export type ChildMode = 'bundle' | 'tsx';

/**
 * Bundles one TypeScript entry to bench/.build/<name>.js (deps external) as `tsc` output runs: plain node, no tsx loader
 * and none of its `keepNames` wrappers (a `__name(...)` call for every closure created). Null if esbuild is missing.
 */
export async function bundleForNode(entry: string, name: string): Promise<string | null> {
  const root = repoRoot();
  const outfile = path.join(root, 'bench', '.build', `${name}.js`);
  try {
    // esbuild ships with tsx; it is an optional accelerator here, not a project dependency.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const esbuild = require('esbuild') as { build(o: Record<string, unknown>): Promise<unknown> };
    await esbuild.build({
      entryPoints: [path.join(root, entry)],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      sourcemap: true,
      outfile,
      logLevel: 'error',
    });
    return outfile;
  } catch {
    return null;
  }
}

/** Bundles tools/bench/worker-child.ts to bench/.build/worker-child.js (deps external); returns null if esbuild is missing. */
export function bundleWorkerChild(): Promise<string | null> {
  return bundleForNode(path.join('tools', 'bench', 'worker-child.ts'), 'worker-child');
}

/** Starts the worker child with an IPC channel; stdout/stderr go to logFile. */
export async function spawnWorkerChild(
  configFile: string,
  logFile: string,
  opts: { cpuProfDir?: string; endOffsets?: Record<string, string>; cpus?: string } = {},
): Promise<{ child: ChildProcess; mode: ChildMode; nodeFlags: string[] }> {
  const bundle = await bundleWorkerChild();
  const root = repoRoot();
  const prof = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`, '--cpu-prof-interval=500'] : [];
  // Extra node flags for the child only (e.g. BENCH_CHILD_NODE_OPTIONS="--max-semi-space-size=4"), for memory experiments.
  const extra = (process.env.BENCH_CHILD_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  // The flags `adjunct run` applies by default (bin/node-flags.js: heap bounds; single-threaded GC on one CPU) for the
  // CPUs the child gets (its taskset list when pinned), unless the experiment flags set them.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { missingNodeFlags } = require(path.join(root, 'bin', 'node-flags.js')) as {
    missingNodeFlags(execArgv: string[], nodeOptions?: string, cpus?: number): string[];
  };
  extra.push(...missingNodeFlags(extra, process.env.NODE_OPTIONS, opts.cpus ? cpuListSize(opts.cpus) : undefined));
  const entry = bundle ? [bundle] : ['--import', 'tsx', path.join(root, 'tools', 'bench', 'worker-child.ts')];
  const fd = fs.openSync(logFile, 'a');
  const args = [
    ...prof,
    ...extra,
    // No --enable-source-maps: `adjunct run` runs without it, and it costs the child its bundle's map at start-up.
    ...entry,
    configFile,
    ...(opts.endOffsets ? [JSON.stringify(opts.endOffsets)] : []),
  ];
  // With --pin the child runs under taskset on the client core.
  const [cmd, argv] = opts.cpus ? ['taskset', ['-c', opts.cpus, process.execPath, ...args]] : [process.execPath, args];
  const child = spawn(cmd, argv, {
    cwd: root,
    stdio: ['ignore', fd, fd, 'ipc'],
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
  });
  fs.closeSync(fd);
  return { child, mode: bundle ? 'bundle' : 'tsx', nodeFlags: extra };
}

/** VmRSS and VmHWM of a process in MiB (null when it is gone). */
export function readProcMemory(pid: number): { rssMb: number; hwmMb: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Samples a process's RSS every intervalMs; stop() returns peak (max of VmHWM and samples), mean and sample count. */
export function sampleRss(pid: number, intervalMs = 200): { stop(): { peakMb: number; meanMb: number; lastMb: number; samples: number } } {
  let peak = 0;
  let sum = 0;
  let n = 0;
  let last = 0;
  const tick = () => {
    const m = readProcMemory(pid);
    if (!m) return;
    peak = Math.max(peak, m.hwmMb || 0, m.rssMb);
    sum += m.rssMb;
    last = m.rssMb;
    n++;
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  return {
    stop() {
      tick();
      clearInterval(timer);
      return { peakMb: peak, meanMb: n ? sum / n : 0, lastMb: last, samples: n };
    },
  };
}

/** Waits for the next IPC message of a type from the child (rejects if it exits or fails first). */
export function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type'], timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`worker child: no '${type}' message within ${timeoutMs} ms`)), timeoutMs);
    const onMsg = (m: T | { type: 'failed'; error: string }) => {
      if (m.type === type) finish(undefined, m as T);
      else if (m.type === 'failed') finish(new Error(`worker child failed: ${(m as { error: string }).error}`));
    };
    const onExit = (code: number | null) => finish(new Error(`worker child exited (code ${code}) before '${type}'`));
    const finish = (err?: Error, v?: T) => {
      clearTimeout(timer);
      child.off('message', onMsg);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(v as T);
    };
    child.on('message', onMsg);
    child.on('exit', onExit);
  });
}

/** Number of CPUs in a taskset CPU list such as "1", "0,2" or "0-3". */
export function cpuListSize(list: string): number {
  return list.split(',').reduce((n, part) => {
    const [a, b] = part.split('-').map(Number);
    return n + (b === undefined ? 1 : b - a + 1);
  }, 0);
}
