// Default V8 flags of the adjunct process, applied by bin/adjunct.js and the bench's worker child unless the same flags
// (or their --no- forms) are already set on the node command line (or, for the heap bounds, in NODE_OPTIONS):
// - heap bounds (peak RSS ≤ 256 MB at 1M records) and the young generation's size and the old generation's growth
//   (a 16 MB semi-space, and a heap growing factor of 4 so the old space is marked about 4× less often): the worker's
//   garbage is short-lived and its live old generation small (33–50 MB), yet with V8's dynamic growing factor it ran a
//   mark-compact every ≈ 7 MB of promotion (bench, 300k records pinned, 3 pairs each: worker CPU 18.5–19.3 → 15.6–16.0
//   µs/record after start-up, 30.2–34.3k → 33.0–39.7k records/s, peak RSS 141–146 → 175–180 MB). Node refuses
//   --heap-growing-percent in NODE_OPTIONS, so it comes through the re-exec or the node command line;
// - on a single CPU, a single-threaded garbage collector: V8's parallel and concurrent GC helper threads can only
//   preempt the one thread doing the work there (bench, 300k records pinned to one core: worker CPU 19.2–22.7
//   µs/record against 23.6–26.2 with the helpers). Node refuses this flag in NODE_OPTIONS: opt out with
//   ADJUNCT_SINGLE_THREADED_GC=0 (or `node --no-single-threaded-gc bin/adjunct.js`).
const fs = require('fs');
const os = require('os');

const DEFAULT_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=16', '--heap-growing-percent=300'];
const SINGLE_CPU_FLAGS = ['--single-threaded-gc'];

/** The CPU quota of a cgroup v2 `cpu.max` or v1 quota/period text, in CPUs (Infinity when unlimited or unreadable). */
function quotaCpus(cpuMax, v1Quota, v1Period) {
  const [quota, period] = (cpuMax || '').trim().split(/\s+/);
  if (quota && quota !== 'max' && Number(period) > 0) return Number(quota) / Number(period);
  const q = Number(v1Quota);
  if (q > 0 && Number(v1Period) > 0) return q / Number(v1Period);
  return Infinity;
}

function readOr(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** CPUs this process may run on: its affinity (os.availableParallelism), bounded by its cgroup's CPU quota (rounded up). */
function availableCpus() {
  const affinity = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  const quota = quotaCpus(
    readOr('/sys/fs/cgroup/cpu.max'),
    readOr('/sys/fs/cgroup/cpu/cpu.cfs_quota_us'),
    readOr('/sys/fs/cgroup/cpu/cpu.cfs_period_us'),
  );
  return Math.max(1, Math.min(affinity, Math.ceil(quota)));
}

/** The default flags for a process with `cpus` CPUs (`env`: ADJUNCT_SINGLE_THREADED_GC=0 keeps V8's GC helpers). */
function defaultNodeFlags(cpus, env = process.env) {
  const single = cpus <= 1 && env.ADJUNCT_SINGLE_THREADED_GC !== '0';
  return single ? [...DEFAULT_NODE_FLAGS, ...SINGLE_CPU_FLAGS] : [...DEFAULT_NODE_FLAGS];
}

/** The default flags (for `cpus`, by default this process's) that neither execArgv nor NODE_OPTIONS sets or negates. */
function missingNodeFlags(execArgv, nodeOptions, cpus = availableCpus(), env = process.env) {
  const given = [...execArgv, ...(nodeOptions || '').split(/\s+/)].map((a) => a.split('=')[0].replace(/_/g, '-'));
  return defaultNodeFlags(cpus, env).filter((f) => {
    const name = f.split('=')[0];
    return !given.includes(name) && !given.includes(`--no-${name.slice(2)}`);
  });
}

module.exports = { DEFAULT_NODE_FLAGS, SINGLE_CPU_FLAGS, availableCpus, quotaCpus, defaultNodeFlags, missingNodeFlags };
