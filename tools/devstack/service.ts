/**
 * The contract every dev-stack service (Kafka, Cassandra, schema registry) implements.
 */
import type { StackSettings } from './endpoints';

/** Kinds of the stack's services, in display order. */
export type ServiceKind = 'kafka' | 'cassandra' | 'registry';

/**
 * Name of one running service instance: its kind for the single-node stack (`kafka`, `cassandra`, `registry`),
 * kind and node number on a multi-node stack (`kafka-2`, `cassandra-3`).
 */
export type ServiceName = string;

/** How to launch a prepared service. */
export interface LaunchSpec {
  command: string;
  args: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

/** One service of the dev stack. */
export interface ServiceDef {
  /** Instance name; also the pid-file, marker and data-folder name. */
  name: ServiceName;
  /** Which service this is. */
  kind: ServiceKind;
  /** Loopback address it binds. */
  host: string;
  /** How long a fresh start may take before it counts as failed. */
  startTimeoutMs: number;
  /** Ports the service binds on its host (checked before starting). */
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
