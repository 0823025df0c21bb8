/**
 * Drives the real docker-compose.yml with the stand-in override (tools/container/compose.host.yml) for the container test:
 * runs `docker compose`, inspects service containers and polls conditions.
 */
import { execFile } from 'child_process';
import * as os from 'os';
import * as path from 'path';

/** Root of this repository. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Compose project name of the test (distinct from a user's `adjunct`). */
export const PROJECT = 'adjunct-container-test';

/** Ports the test stack uses: away from the dev stack's defaults (9092, 9093, 9042, 7000, 8081, 9081) and the usual private ones. */
export const PORTS = {
  ADJUNCT_KAFKA_PORT: 29192,
  ADJUNCT_KAFKA_INTERNAL_PORT: 29194,
  ADJUNCT_KAFKA_CONTROLLER_PORT: 29193,
  ADJUNCT_CASSANDRA_PORT: 29142,
  ADJUNCT_CASSANDRA_STORAGE_PORT: 27100,
  ADJUNCT_REGISTRY_PORT: 28181,
  ADJUNCT_REGISTRY_MANAGEMENT_PORT: 29181,
  ADJUNCT_HTTP_PORT: 28180,
} as const;

/** The environment `docker compose` runs with: the test's ports, no admin token, this machine's name, the classic builder (no buildx here). */
function composeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_BUILDKIT: '0', COMPOSE_BAKE: 'false' };
  delete env.ADJUNCT_ADMIN_TOKEN;
  env.ADJUNCT_HOST_NAME = os.hostname();
  for (const [k, v] of Object.entries(PORTS)) env[k] = String(v);
  return env;
}

/** Runs a command; resolves with stdout, rejects with the tail of its output. */
export function run(cmd: string, args: string[], timeoutMs = 600_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: REPO_ROOT, env: composeEnv(), maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err)
        reject(
          new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${`${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n')}`),
        );
      else resolve(stdout);
    });
  });
}

/** `docker compose` on the real compose file plus the stand-in override. */
export function compose(...args: string[]): Promise<string> {
  const files = ['docker-compose.yml', path.join('tools', 'container', 'compose.host.yml')];
  return run('docker', ['compose', '-p', PROJECT, ...files.flatMap((f) => ['-f', f]), ...args]);
}

/** Container id of a service (including exited ones). */
export async function containerId(service: string): Promise<string> {
  const id = (await compose('ps', '-a', '-q', service)).trim().split('\n')[0];
  if (!id) throw new Error(`no container for service ${service}`);
  return id;
}

/** The parts of `docker inspect` the test reads. */
export interface ContainerState {
  Status: string;
  Running: boolean;
  ExitCode: number;
  OOMKilled: boolean;
  StartedAt: string;
  Health?: { Status: string };
}

/** State of a service's container. */
export async function state(service: string): Promise<ContainerState> {
  return JSON.parse(await run('docker', ['inspect', '-f', '{{json .State}}', await containerId(service)])) as ContainerState;
}

/** A service's log output (stdout and stderr). */
export async function logs(service: string): Promise<string> {
  return compose('logs', '--no-color', '--no-log-prefix', service);
}

/** Polls `check` until it returns a value other than undefined; fails with the last observation after timeoutMs. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 180_000, everyMs = 1000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e instanceof Error ? e.message : e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last === undefined ? '' : `; last: ${String(last)}`}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** GET/POST on the worker's HTTP API published by the test stack; resolves with status and parsed JSON body. */
export async function api(method: 'GET' | 'POST', route: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://127.0.0.1:${PORTS.ADJUNCT_HTTP_PORT}${route}`, { method, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}
