/**
 * Which service instances a stack runs (one Kafka and one Cassandra by default, or N of each on 127.0.0.1…N),
 * and the record of the topology a running stack was started with.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { StackSettings } from './endpoints';
import { cassandraNode } from './cassandra';
import { kafkaNode } from './kafka';
import { registryService } from './registry';
import type { ServiceDef } from './service';

/** Node counts of a stack. */
export interface Topology {
  cassandraNodes: number;
  kafkaBrokers: number;
}

/** The Kafka brokers of a topology, node 1 first. */
export function kafkaNodes(t: Topology): ServiceDef[] {
  return Array.from({ length: t.kafkaBrokers }, (_, i) => kafkaNode(i + 1, t.kafkaBrokers));
}

/** The Cassandra nodes of a topology, the seed (node 1) first. */
export function cassandraNodes(t: Topology): ServiceDef[] {
  return Array.from({ length: t.cassandraNodes }, (_, i) => cassandraNode(i + 1, t.cassandraNodes));
}

/** Every service instance of a topology, in display order. */
export function stackServices(t: Topology): ServiceDef[] {
  return [...kafkaNodes(t), ...cassandraNodes(t), registryService];
}

/** One line describing a topology, e.g. `3 Cassandra nodes, 3 Kafka brokers`. */
export function describeTopology(t: Topology): string {
  const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  return `${plural(t.cassandraNodes, 'Cassandra node')}, ${plural(t.kafkaBrokers, 'Kafka broker')}`;
}

function topologyFile(s: StackSettings): string {
  return path.join(s.stackDir, 'topology.json');
}

/** The topology the stack in this folder was last started with, or undefined. */
export function recordedTopology(s: StackSettings): Topology | undefined {
  try {
    const t = JSON.parse(fs.readFileSync(topologyFile(s), 'utf8')) as Partial<Topology>;
    if (Number.isInteger(t.cassandraNodes) && Number.isInteger(t.kafkaBrokers))
      return { cassandraNodes: t.cassandraNodes!, kafkaBrokers: t.kafkaBrokers! };
  } catch {
    /* none recorded */
  }
  return undefined;
}

/** Records the topology a stack is being started with. */
export function recordTopology(s: StackSettings, t: Topology): void {
  fs.writeFileSync(topologyFile(s), `${JSON.stringify(t)}\n`);
}

/** Forgets the recorded topology (after the stack stopped). */
export function forgetTopology(s: StackSettings): void {
  fs.rmSync(topologyFile(s), { force: true });
}

/** True when both topologies have the same node counts. */
export function sameTopology(a: Topology, b: Topology): boolean {
  return a.cassandraNodes === b.cassandraNodes && a.kafkaBrokers === b.kafkaBrokers;
}
