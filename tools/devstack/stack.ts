/**
 * Orchestrates the dev stack: start (idempotent), stop and status of Kafka, Cassandra and the schema registry,
 * one node each by default or several Kafka brokers and Cassandra nodes on 127.0.0.1…N (see topology.ts).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { PORT_ENV_VARS, stackSettings, TOPOLOGY_ENV_VARS, type StackSettings } from './endpoints';
import { verifyCassandraRing } from './cassandra';
import { registryService } from './registry';
import {
  cassandraNodes,
  describeTopology,
  forgetTopology,
  kafkaNodes,
  recordedTopology,
  recordTopology,
  sameTopology,
  stackServices,
  type Topology,
} from './topology';
import {
  isAlive,
  isPortFree,
  markerArg,
  ourPid,
  pidFile,
  readPid,
  rssMiB,
  sleep,
  spawnDetached,
  stopPid,
  tailFile,
  waitUntil,
  withTimeout,
} from './process';
import type { ServiceDef, ServiceName } from './service';

/** Options accepted by the stack operations. */
export interface StackOptions {
  log?: (s: string) => void;
}

/** Health of one service as reported by stackStatus(). */
export interface ServiceStatus {
  name: ServiceName;
  pid?: number;
  alive: boolean;
  healthy: boolean;
  rssMiB?: number;
  error?: string;
}

/** Raised when a service cannot be brought up; carries the tail of its log. */
export class StackError extends Error {
  override name = 'StackError';
}

const LOG_TAIL_LINES = 40;

function logTail(svc: ServiceDef, s: StackSettings): string {
  const file = svc.logFile(s);
  const extra =
    svc.kind === 'kafka'
      ? path.join(path.dirname(file), 'server.log')
      : svc.kind === 'cassandra'
        ? path.join(path.dirname(file), 'system.log')
        : undefined;
  let text = `--- last ${LOG_TAIL_LINES} lines of ${file} ---\n${tailFile(file, LOG_TAIL_LINES)}`;
  if (extra && fs.existsSync(extra)) text += `\n--- last ${LOG_TAIL_LINES} lines of ${extra} ---\n${tailFile(extra, LOG_TAIL_LINES)}`;
  return text;
}

/** Holds an exclusive lock file in the stack folder while fn runs (waits for another holder, breaks stale locks). */
async function withStackLock<T>(s: StackSettings, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(s.stackDir, { recursive: true });
  const lock = path.join(s.stackDir, '.lock');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      fs.writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(fs.readFileSync(lock, 'utf8').trim());
      if (!Number.isInteger(holder) || holder <= 0 || !isAlive(holder)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new StackError(`stack folder ${s.stackDir} is locked by pid ${holder}`);
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Brings one service up (or adopts the running one) and waits until it really answers. */
async function upService(svc: ServiceDef, s: StackSettings, log: (m: string) => void): Promise<void> {
  const started = Date.now();
  const existing = ourPid(s.stackDir, svc.name);
  let pid: number;
  let fresh = false;
  if (existing !== undefined) {
    pid = existing;
  } else {
    fs.rmSync(pidFile(s.stackDir, svc.name), { force: true });
    for (const port of svc.ports(s)) {
      if (!(await isPortFree(port, svc.host))) {
        const key = (Object.keys(PORT_ENV_VARS) as (keyof typeof PORT_ENV_VARS)[]).find((k) => s[k] === port);
        const hint = key ? `set ${PORT_ENV_VARS[key]} to another port` : 'override the port';
        throw new StackError(
          `${svc.name}: port ${svc.host}:${port} is already in use by a process this stack did not start; stop it or ${hint}`,
        );
      }
    }
    await svc.prepare(s);
    const spec = svc.launch(s);
    pid = spawnDetached({
      service: svc.name,
      stackDir: s.stackDir,
      command: spec.command,
      args: [markerArg(svc.name, s.stackDir), ...spec.args],
      cwd: spec.cwd,
      env: spec.env,
      logFile: svc.logFile(s),
    });
    fresh = true;
    log(`${svc.name}: started pid ${pid}`);
  }
  const deadline = started + svc.startTimeoutMs;
  const abort = () => (isAlive(pid) ? undefined : `${svc.name} (pid ${pid}) exited`);
  try {
    await waitUntil(() => svc.probe(s, false), Math.max(1000, deadline - Date.now()), { intervalMs: 500, abort });
    if (fresh) await waitUntil(() => svc.probe(s, true), Math.max(5000, deadline - Date.now()), { intervalMs: 1000, abort });
  } catch (e) {
    throw new StackError(`${svc.name} did not become healthy: ${(e as Error).message}\n${logTail(svc, s)}`);
  }
  log(`${svc.name}: ${fresh ? 'ready' : 'reused running'} pid ${pid} in ${secs(Date.now() - started)}`);
}

/** The topology a stack folder's running services were started with, when any of them still runs. */
function runningTopology(s: StackSettings): Topology | undefined {
  const t = recordedTopology(s);
  return t && stackServices(t).some((svc) => ourPid(s.stackDir, svc.name) !== undefined) ? t : undefined;
}

/** Starts the services in `group` one after another, each once the previous one answers (a Cassandra ring joins node by node). */
async function upInOrder(group: ServiceDef[], s: StackSettings, log: (m: string) => void): Promise<void> {
  for (const svc of group) await upService(svc, s, log);
}

/**
 * Starts any missing stack services and waits until all really answer; reuses healthy running ones. Kafka brokers and
 * the registry start concurrently (a KRaft quorum needs its voters together), Cassandra nodes one after another.
 * The topology comes from the settings (ADJUNCT_STACK_CASSANDRA_NODES / ADJUNCT_STACK_KAFKA_BROKERS, default one of each); a
 * folder whose services run with another topology is refused.
 */
export async function ensureStack(opts: StackOptions = {}): Promise<void> {
  const log = opts.log ?? ((m: string) => console.log(`[devstack] ${m}`));
  const s = stackSettings();
  const want: Topology = { cassandraNodes: s.cassandraNodes, kafkaBrokers: s.kafkaBrokers };
  const started = Date.now();
  await withStackLock(s, async () => {
    const running = runningTopology(s);
    if (running && !sameTopology(running, want)) {
      throw new StackError(
        `the stack in ${s.stackDir} runs ${describeTopology(running)}, not ${describeTopology(want)}: ` +
          `run \`npm run stack:down\` first, or set ${TOPOLOGY_ENV_VARS.cassandraNodes}=${running.cassandraNodes} ${TOPOLOGY_ENV_VARS.kafkaBrokers}=${running.kafkaBrokers}`,
      );
    }
    recordTopology(s, want);
    const groups = [...kafkaNodes(want).map((k) => [k]), cassandraNodes(want), [registryService]];
    const results = await Promise.allSettled(groups.map((g) => upInOrder(g, s, log)));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (failures.length) throw new StackError(`dev stack failed to start:\n${failures.join('\n\n')}`);
    if (want.cassandraNodes > 1) {
      const ringAt = Date.now();
      await waitUntil(() => verifyCassandraRing(s), 120_000, { intervalMs: 2000 }).catch((e: Error) => {
        throw new StackError(`the Cassandra ring did not come together: ${e.message}`);
      });
      log(
        `cassandra: ring of ${want.cassandraNodes} verified (RF=${want.cassandraNodes} write+read at ALL) in ${secs(Date.now() - ringAt)}`,
      );
    }
  });
  log(`stack ready (${describeTopology(want)}) in ${secs(Date.now() - started)} (folder ${s.stackDir})`);
}

/** Stops the services this stack started (only pids carrying our marker); `purge` also deletes the stack folder. */
export async function stopStack(opts: StackOptions & { purge?: boolean } = {}): Promise<void> {
  const log = opts.log ?? ((m: string) => console.log(`[devstack] ${m}`));
  const s = stackSettings();
  await withStackLock(s, async () => {
    const recorded = recordedTopology(s) ?? { cassandraNodes: s.cassandraNodes, kafkaBrokers: s.kafkaBrokers };
    const services = new Map([...stackServices(recorded), ...stackServices(s)].map((svc) => [svc.name, svc]));
    await Promise.all([...services.values()].map((svc) => stopService(svc, s, log)));
    forgetTopology(s);
  });
  if (opts.purge) {
    const dir = path.resolve(s.stackDir);
    if (dir === '/' || dir === os.homedir() || dir === s.repoRoot) throw new StackError(`refusing to purge ${dir}`);
    fs.rmSync(dir, { recursive: true, force: true });
    log(`purged ${dir}`);
  }
}

/** Stops one service instance if it is ours and alive, and removes its pid file. */
async function stopService(svc: ServiceDef, s: StackSettings, log: (m: string) => void): Promise<void> {
  const pid = readPid(s.stackDir, svc.name);
  if (pid === undefined) return log(`${svc.name}: not running`);
  if (ourPid(s.stackDir, svc.name) === undefined) {
    log(`${svc.name}: pid ${pid} is not ours or gone; removing stale pid file`);
  } else {
    const how = await stopPid(pid, svc.kind === 'cassandra' ? 30_000 : 20_000);
    log(`${svc.name}: stopped pid ${pid} (${how === 'kill' ? 'SIGKILL after grace period' : 'SIGTERM'})`);
  }
  fs.rmSync(pidFile(s.stackDir, svc.name), { force: true });
}

/** Reports pid, liveness, health (quick probe) and RSS of each service of the recorded (else configured) topology. */
export async function stackStatus(): Promise<ServiceStatus[]> {
  const s = stackSettings();
  const topology = recordedTopology(s) ?? { cassandraNodes: s.cassandraNodes, kafkaBrokers: s.kafkaBrokers };
  return Promise.all(
    stackServices(topology).map(async (svc): Promise<ServiceStatus> => {
      const pid = ourPid(s.stackDir, svc.name);
      if (pid === undefined) return { name: svc.name, pid: readPid(s.stackDir, svc.name), alive: false, healthy: false };
      try {
        await withTimeout(svc.probe(s, false), 15_000, `${svc.name} probe`);
        return { name: svc.name, pid, alive: true, healthy: true, rssMiB: rssMiB(pid) };
      } catch (e) {
        return { name: svc.name, pid, alive: true, healthy: false, rssMiB: rssMiB(pid), error: (e as Error).message };
      }
    }),
  );
}
