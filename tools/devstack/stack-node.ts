/**
 * What every node of a multi-node service (Kafka broker, Cassandra node) has in common: its name and address, its
 * folders, its jars, and the ServiceDef fields that follow from them.
 */
import * as path from 'path';
import { nodeHost, VERSIONS, type StackSettings } from './endpoints';
import { resolvePomLibs } from './download';
import type { ServiceDef } from './service';

/** A service that runs as one node or as N nodes. */
export type NodeKind = 'kafka' | 'cassandra';

/** One node of the stack: its 1-based index, the node count, its instance name and address. */
export interface StackNode {
  kind: NodeKind;
  index: number;
  count: number;
  name: string;
  host: string;
}

/** Node `index` (1-based) of `count`: named after its kind on 127.0.0.1 alone, else `<kind>-<index>` on 127.0.0.<index>. */
export function stackNode(kind: NodeKind, index: number, count: number): StackNode {
  return { kind, index, count, name: count === 1 ? kind : `${kind}-${index}`, host: nodeHost(index) };
}

/** A node's folders: its home (data, logs) under the stack folder, and the jars of its version in the cache. */
export function nodeDirs(s: StackSettings, node: StackNode) {
  const home = path.join(s.stackDir, node.name);
  return {
    home,
    data: path.join(home, 'data'),
    logs: path.join(home, 'logs'),
    libs: path.join(s.cacheDir, `${node.kind}-${VERSIONS[node.kind]}`, 'libs'),
  };
}

/** Resolves the node's jars (tools/devstack/poms/<kind>/pom.xml and its dependencies) into the cache. */
export async function resolveNodeLibs(s: StackSettings, node: StackNode): Promise<void> {
  const { libs } = nodeDirs(s, node);
  await resolvePomLibs(path.join(s.repoRoot, 'tools', 'devstack', 'poms', node.kind, 'pom.xml'), path.dirname(libs));
}

/** The ServiceDef fields a node's identity decides: name, kind, host, ports, start timeout and `<kind>.out` log file. */
export function nodeService(
  node: StackNode,
  startTimeoutMs: number,
  ports: (s: StackSettings) => number[],
): Pick<ServiceDef, 'name' | 'kind' | 'host' | 'startTimeoutMs' | 'ports' | 'logFile'> {
  return {
    name: node.name,
    kind: node.kind,
    host: node.host,
    startTimeoutMs,
    ports,
    logFile: (s) => path.join(nodeDirs(s, node).logs, `${node.kind}.out`),
  };
}
