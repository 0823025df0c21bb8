/**
 * Process plumbing for the dev stack: locating Java, spawning detached services with pid files,
 * recognising our own processes, stopping them, tailing logs and bounded waits.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { STACK_HOST } from './endpoints';

/** System property every stack JVM carries so we only ever touch our own processes. */
export const MARKER_PROPERTY = 'adjunct.devstack';

/** The marker argument for one service of one stack folder. */
export function markerArg(service: string, stackDir: string): string {
  return `-D${MARKER_PROPERTY}=${service}@${stackDir}`;
}

function javaMajor(javaBin: string): number | undefined {
  const r = spawnSync(javaBin, ['-version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000 });
  return r.status === 0 ? parseJavaVersion(`${r.stderr}\n${r.stdout}`) : undefined;
}

function parseJavaVersion(text: string): number | undefined {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return undefined;
  const major = Number(m[1]);
  return major === 1 ? Number(m[2]) : major;
}

const javaCache = new Map<string, string>();

/** Version window a service needs from Java, and an env var that may name the binary directly. */
export interface JavaNeed {
  min: number;
  max?: number;
  envVar?: string;
}

/**
 * Finds a Java binary in the version window: $envVar, then JAVA_HOME, then `java` on PATH, then /usr/lib/jvm/* (newest fitting).
 * The default window is exactly 17 (Kafka 4.1 and Cassandra 5.0 both run on it).
 */
export function findJava(need: JavaNeed = { min: 17, max: 17, envVar: 'ADJUNCT_JAVA' }): string {
  const key = `${need.min}-${need.max ?? ''}-${need.envVar ?? ''}`;
  const hit = javaCache.get(key);
  if (hit) return hit;
  const candidates: string[] = [];
  const explicit = need.envVar ? process.env[need.envVar] : undefined;
  if (explicit) candidates.push(explicit);
  if (process.env.JAVA_HOME) candidates.push(path.join(process.env.JAVA_HOME, 'bin', 'java'));
  candidates.push('java');
  const jvmRoot = '/usr/lib/jvm';
  if (fs.existsSync(jvmRoot)) {
    const dirs = fs.readdirSync(jvmRoot).filter((n) => !n.startsWith('.'));
    const num = (n: string) => Number(/(?:^|\D)(\d{2})(?:\D|$)/.exec(n)?.[1] ?? 0);
    for (const d of dirs.sort((a, b) => num(b) - num(a))) candidates.push(path.join(jvmRoot, d, 'bin', 'java'));
  }
  const seen: string[] = [];
  for (const c of [...new Set(candidates)]) {
    const major = javaMajor(c);
    seen.push(`${c}: ${major ?? 'not runnable'}`);
    if (major !== undefined && major >= need.min && (need.max === undefined || major <= need.max)) {
      javaCache.set(key, c);
      return c;
    }
  }
  const window = need.max === need.min ? `${need.min}` : `${need.min}${need.max ? `-${need.max}` : '+'}`;
  throw new Error(`no Java ${window} found${need.envVar ? ` (set ${need.envVar} to a java binary)` : ''}; tried ${seen.join(', ')}`);
}

/** Path of a service's pid file inside the stack folder. */
export function pidFile(stackDir: string, service: string): string {
  return path.join(stackDir, `${service}.pid`);
}

/** Reads a service's pid file; undefined when missing or garbled. */
export function readPid(stackDir: string, service: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(pidFile(stackDir, service), 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** True when a process with this pid exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true;
  }
}

/** True when the pid is alive and its command line carries our marker for this service and folder. */
export function isOurProcess(pid: number, service: string, stackDir: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes(markerArg(service, stackDir));
  } catch {
    return false;
  }
}

/** The live pid of our service from its pid file, or undefined. */
export function ourPid(stackDir: string, service: string): number | undefined {
  const pid = readPid(stackDir, service);
  return pid !== undefined && isOurProcess(pid, service, stackDir) ? pid : undefined;
}

/** Options for spawning one detached service. */
export interface SpawnOptions {
  service: string;
  stackDir: string;
  command: string;
  args: string[];
  cwd: string;
  logFile: string;
  env?: NodeJS.ProcessEnv;
}

/** Starts a detached process (survives our exit) with stdout/stderr appended to a log file; writes its pid file. */
export function spawnDetached(o: SpawnOptions): number {
  fs.mkdirSync(path.dirname(o.logFile), { recursive: true });
  const fd = fs.openSync(o.logFile, 'a');
  try {
    fs.writeSync(fd, `\n=== ${new Date().toISOString()} starting ${o.service}: ${o.command} ${o.args.join(' ')}\n`);
    const child = spawn(o.command, o.args, {
      cwd: o.cwd,
      env: { ...process.env, ...o.env },
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    if (child.pid === undefined) throw new Error(`failed to spawn ${o.service} (${o.command})`);
    child.unref();
    fs.writeFileSync(pidFile(o.stackDir, o.service), `${child.pid}\n`);
    return child.pid;
  } finally {
    fs.closeSync(fd);
  }
}

/** Sends SIGTERM, waits up to graceMs, then SIGKILLs; resolves once the process is gone. */
export async function stopPid(pid: number, graceMs: number): Promise<'term' | 'kill' | 'gone'> {
  if (!isAlive(pid)) return 'gone';
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return 'gone';
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return 'term';
    await sleep(200);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return 'term';
  }
  const killDeadline = Date.now() + 10_000;
  while (isAlive(pid) && Date.now() < killDeadline) await sleep(100);
  return 'kill';
}

/** Last `lines` lines of a file ('' when missing). */
export function tailFile(file: string, lines = 40): string {
  try {
    const size = fs.statSync(file).size;
    const len = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(len);
    const fd = fs.openSync(file, 'r');
    try {
      fs.readSync(fd, buf, 0, len, size - len);
    } finally {
      fs.closeSync(fd);
    }
    return buf
      .toString('utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

/** Resolves after ms milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Retries `probe` until it resolves or the timeout passes; rejects with the last error. Aborts early if `abort()` returns a reason. */
export async function waitUntil(
  probe: () => Promise<void>,
  timeoutMs: number,
  opts: { intervalMs?: number; abort?: () => string | undefined } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const reason = opts.abort?.();
    if (reason) throw new Error(reason);
    try {
      await probe();
      return;
    } catch (e) {
      last = e;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s: ${last instanceof Error ? last.message : String(last)}`);
    }
    await sleep(opts.intervalMs ?? 1000);
  }
}

/** Rejects if the promise does not settle within ms. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`${what} timed out after ${ms}ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** True when nothing listens on the loopback port of this address (we can bind it ourselves). */
export function isPortFree(port: number, host = STACK_HOST): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Resident set size of a process in MiB (from /proc), or undefined. */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}
