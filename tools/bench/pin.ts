/** `--pin`: Cassandra and Kafka on CPU 0, the client under test on CPU 1 (taskset), affinity restored afterwards. */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** CPU list of the client under test when pinned. */
export const CLIENT_CPUS = '1';
/** CPU list of the servers (Cassandra, Kafka) when pinned. */
export const SERVER_CPUS = '0';

function setAffinity(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** Reads a service pid from the stack folder's pid file. */
function stackPid(stackDir: string, service: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(path.join(stackDir, `${service}.pid`), 'utf8').trim());
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Pins the stack's Cassandra and Kafka and this process; restore() gives every one of them all CPUs back. */
export function pinStack(stackDir: string): { pinned: Record<string, number>; restore(): void } {
  if (os.cpus().length < 2) throw new Error('--pin needs at least 2 CPUs');
  const all = `0-${os.cpus().length - 1}`;
  const pinned: Record<string, number> = {};
  for (const service of ['cassandra', 'kafka']) {
    const pid = stackPid(stackDir, service);
    if (pid === undefined) throw new Error(`--pin: no pid file for ${service} in ${stackDir}`);
    setAffinity(pid, SERVER_CPUS);
    pinned[service] = pid;
  }
  setAffinity(process.pid, CLIENT_CPUS);
  pinned.bench = process.pid;
  return {
    pinned,
    restore() {
      for (const pid of Object.values(pinned)) {
        try {
          setAffinity(pid, all);
        } catch {
          // the process may be gone
        }
      }
    },
  };
}
