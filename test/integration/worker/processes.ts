/** Spawning real `adjunct run` worker processes for integration tests. */
import { ChildProcess, spawn } from 'child_process';
import * as path from 'path';

/** A worker child process and its captured output. */
export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `adjunct run --config file` as a child process (with `--no-http` unless `http` is set: the config's worker.http then applies). */
export function spawnWorker(configFile: string, env: NodeJS.ProcessEnv = {}, http = false): WorkerProcess {
  const bin = path.resolve(__dirname, '../../../bin/adjunct.js');
  const child = spawn(process.execPath, [bin, 'run', '--config', configFile, ...(http ? [] : ['--no-http'])], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d.toString()));
  child.stderr!.on('data', (d) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** Kills a worker if still alive and waits for it. */
export async function killWorker(w: WorkerProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill(signal);
  await w.exited;
}
