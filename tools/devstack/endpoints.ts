/**
 * Where the local dev stack lives: ports, folders and the client-facing endpoints.
 * Every value can be overridden through an ADJUNCT_* environment variable.
 */
import * as os from 'os';
import * as path from 'path';

/** Host every stack service binds to (loopback only); node 1 of a multi-node stack. */
export const STACK_HOST = '127.0.0.1';

/** Most Cassandra nodes or Kafka brokers the local stack runs (one per loopback address 127.0.0.1…127.0.0.N). */
export const MAX_NODES = 5;

/**
 * Environment variable that moves the Kafka and Cassandra nodes to other loopback addresses (default 127.0.0.1, so a
 * ring runs on 127.0.0.1…N). A second stack on e.g. 127.0.0.11…13 can then keep the default ports beside the usual one.
 */
export const FIRST_NODE_ADDRESS_ENV_VAR = 'ADJUNCT_FIRST_NODE_ADDRESS';

/** Loopback address of node `index` (1-based): 127.0.0.<index> by default, counted on from ADJUNCT_FIRST_NODE_ADDRESS. */
export function nodeHost(index: number): string {
  const first = process.env[FIRST_NODE_ADDRESS_ENV_VAR]?.trim() || STACK_HOST;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(first);
  const octets = m ? [m[1], m[2], m[3]].map(Number) : [];
  if (!m || octets.some((o) => o > 255) || octets[2] < 1)
    throw new Error(`${FIRST_NODE_ADDRESS_ENV_VAR}=${first} must be a loopback address 127.x.y.z`);
  const last = octets[2] + index - 1;
  if (last > 254) throw new Error(`${FIRST_NODE_ADDRESS_ENV_VAR}=${first} leaves no loopback address for node ${index}`);
  return `127.${octets[0]}.${octets[1]}.${last}`;
}

/** Datacenter name Cassandra reports with SimpleSnitch. */
export const LOCAL_DATA_CENTER = 'datacenter1';

/** Pinned versions of the stack's services. */
export const VERSIONS = { kafka: '4.1.1', cassandra: '5.0.6', registry: '3.3.3' } as const;

/** Ports and folders the stack uses, resolved from the environment. */
export interface StackSettings {
  /** Number of Cassandra nodes (1 = the default single-node stack). */
  cassandraNodes: number;
  /** Number of KRaft brokers, each also a controller (1 = the default single-node stack). */
  kafkaBrokers: number;
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

/** Environment variable that sets each node count (`stack:up --cassandra-nodes/--kafka-brokers` set them too). */
export const TOPOLOGY_ENV_VARS = {
  cassandraNodes: 'ADJUNCT_STACK_CASSANDRA_NODES',
  kafkaBrokers: 'ADJUNCT_STACK_KAFKA_BROKERS',
} as const;

function countFromEnv(name: string): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_NODES) throw new Error(`${name}=${raw} must be a whole number from 1 to ${MAX_NODES}`);
  return n;
}

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
    cassandraNodes: countFromEnv(TOPOLOGY_ENV_VARS.cassandraNodes),
    kafkaBrokers: countFromEnv(TOPOLOGY_ENV_VARS.kafkaBrokers),
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

/** Loopback addresses of nodes 1…count. */
export function nodeHosts(count: number): string[] {
  return Array.from({ length: count }, (_, i) => nodeHost(i + 1));
}

/** Client endpoints of the local stack (every Kafka broker, every Cassandra node as contact point, registry URL). */
export function stackEndpoints(): StackEndpoints {
  const s = stackSettings();
  return {
    kafkaBrokers: nodeHosts(s.kafkaBrokers).map((h) => `${h}:${s.kafkaPort}`),
    cassandraContactPoints: nodeHosts(s.cassandraNodes),
    cassandraPort: s.cassandraPort,
    localDataCenter: LOCAL_DATA_CENTER,
    registryUrl: `http://${STACK_HOST}:${s.registryPort}/apis/ccompat/v7`,
  };
}
