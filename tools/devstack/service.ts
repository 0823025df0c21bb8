/**
 * The contract every dev-stack service (Kafka, Cassandra, schema registry) implements.
 */
import type { StackSettings } from './endpoints';

/** Names of the stack's services, in display order. */
export type ServiceName = 'kafka' | 'cassandra' | 'registry';

/** How to launch a prepared service. */
export interface LaunchSpec {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

/** One service of the dev stack. */
export interface ServiceDef {
  /** Service name; also the pid-file and marker name. */
  name: ServiceName;
  /** How long a fresh start may take before it counts as failed. */
  startTimeoutMs: number;
  /** Loopback ports the service binds (checked before starting). */
  ports(s: StackSettings): number[];
  /** The file its stdout/stderr (and usually its own log) go to. */
  logFile(s: StackSettings): string;
  /** Downloads binaries into the cache and writes config/data folders under the stack folder. */
  prepare(s: StackSettings): Promise<void>;
  /** Command line to start it (java binary, args incl. marker are added by the caller). */
  launch(s: StackSettings): LaunchSpec;
  /** Throws unless the service really answers; `deep` does a full round trip. */
  probe(s: StackSettings, deep: boolean): Promise<void>;
}
