/**
 * Where the local dev stack lives: ports, folders and the client-facing endpoints.
 * Every value can be overridden through an ADJUNCT_* environment variable.
 */
import * as os from 'os';
import * as path from 'path';

/** Host every stack service binds to (loopback only). */
export const STACK_HOST = '127.0.0.1';

/** Datacenter name Cassandra reports with SimpleSnitch. */
export const LOCAL_DATA_CENTER = 'datacenter1';

/** Pinned versions of the stack's services. */
export const VERSIONS = { kafka: '4.1.1', cassandra: '5.0.6', registry: '3.3.3' } as const;

/** Ports and folders the stack uses, resolved from the environment. */
export interface StackSettings {
  kafkaPort: number;
  kafkaControllerPort: number;
  cassandraPort: number;
  cassandraStoragePort: number;
  registryPort: number;
  registryManagementPort: number;
  cacheDir: string;
  stackDir: string;
  repoRoot: string;
}

/** What clients need to reach the running stack. */
export interface StackEndpoints {
  kafkaBrokers: string[];
  cassandraContactPoints: string[];
  cassandraPort: number;
  localDataCenter: string;
  /** Confluent-compatible API base, e.g. http://127.0.0.1:8081/apis/ccompat/v7 */
  registryUrl: string;
}

/** Environment variable that overrides each port setting. */
export const PORT_ENV_VARS = {
  kafkaPort: 'ADJUNCT_KAFKA_PORT',
  kafkaControllerPort: 'ADJUNCT_KAFKA_CONTROLLER_PORT',
  cassandraPort: 'ADJUNCT_CASSANDRA_PORT',
  cassandraStoragePort: 'ADJUNCT_CASSANDRA_STORAGE_PORT',
  registryPort: 'ADJUNCT_REGISTRY_PORT',
  registryManagementPort: 'ADJUNCT_REGISTRY_MANAGEMENT_PORT',
} as const;

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new Error(`${name}=${raw} is not a valid TCP port`);
  return n;
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

/** Root of this repository (two levels above tools/devstack). */
export function repoRoot(): string {
  return path.resolve(__dirname, '..', '..');
}

/** Reads the stack's ports and folders from the environment, applying defaults. */
export function stackSettings(): StackSettings {
  const root = repoRoot();
  const cache = process.env.ADJUNCT_CACHE_DIR || path.join(os.homedir(), '.cache', 'adjunct');
  const stack = process.env.ADJUNCT_STACK_DIR || path.join(root, '.adjunct', 'stack');
  return {
    kafkaPort: portFromEnv(PORT_ENV_VARS.kafkaPort, 9092),
    kafkaControllerPort: portFromEnv(PORT_ENV_VARS.kafkaControllerPort, 9093),
    cassandraPort: portFromEnv(PORT_ENV_VARS.cassandraPort, 9042),
    cassandraStoragePort: portFromEnv(PORT_ENV_VARS.cassandraStoragePort, 7000),
    registryPort: portFromEnv(PORT_ENV_VARS.registryPort, 8081),
    registryManagementPort: portFromEnv(PORT_ENV_VARS.registryManagementPort, 9081),
    cacheDir: path.resolve(expandHome(cache)),
    stackDir: path.resolve(expandHome(stack)),
    repoRoot: root,
  };
}

/** Client endpoints of the local stack (Kafka brokers, Cassandra contact points, registry URL). */
export function stackEndpoints(): StackEndpoints {
  const s = stackSettings();
  return {
    kafkaBrokers: [`${STACK_HOST}:${s.kafkaPort}`],
    cassandraContactPoints: [STACK_HOST],
    cassandraPort: s.cassandraPort,
    localDataCenter: LOCAL_DATA_CENTER,
    registryUrl: `http://${STACK_HOST}:${s.registryPort}/apis/ccompat/v7`,
  };
}
