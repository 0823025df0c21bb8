import { nextWriteMicros, CqlExecutor } from './cql-executor';
import { BatchSender, WriteBatcher, WriteBatcherOptions } from './write-batcher';

/** Group of every row when the cluster has a single node: all rows share one replica set. */
const SINGLE_NODE_GROUP = '*';

/**
 * The batch group of a routing key: its replica set from the driver's token map (so a batch never fans out from its
 * coordinator), or the partition key itself when the token map is not known.
 */
export function replicaGroupOf(exec: CqlExecutor, keyspace: string): (routingKey: Buffer) => string {
  const client = exec.client;
  // The driver returns one cached replica array per token range: its group name is computed once.
  const names = new WeakMap<object, string>();
  return (routingKey) => {
    if (client.hosts.length === 1) return SINGLE_NODE_GROUP;
    const replicas = client.getReplicas(keyspace, routingKey) as { address: string }[] | null | undefined;
    if (!replicas || replicas.length === 0) return `pk:${routingKey.toString('base64')}`;
    let name = names.get(replicas);
    if (name === undefined) {
      name = replicas
        .map((h) => h.address)
        .sort()
        .join(',');
      names.set(replicas, name);
    }
    return name;
  };
}

/** Whether the driver's view of the ring (hosts, token map, the keyspace's replicas) changed since the last call. */
function topologyWatch(exec: CqlExecutor, keyspace: string): () => boolean {
  const client = exec.client;
  const metadata = client.metadata as unknown as { ring?: unknown; keyspaces?: Record<string, unknown> };
  let hosts = -1;
  let ring: unknown;
  let replicas: unknown;
  return () => {
    const h = client.hosts.length;
    const r = metadata.ring;
    const k = metadata.keyspaces?.[keyspace];
    if (h === hosts && r === ring && k === replicas) return false;
    hosts = h;
    ring = r;
    replicas = k;
    return true;
  };
}

/** A WriteBatcher that sends through exec (its consistency, retry policy and error classification) into keyspace. */
export function createWriteBatcher(exec: CqlExecutor, keyspace: string, options: WriteBatcherOptions): WriteBatcher {
  const sender: BatchSender = {
    send: (rows, timestamp, abandoned) => exec.sendRows(rows, timestamp, abandoned),
    groupOf: replicaGroupOf(exec, keyspace),
    nextTimestamp: nextWriteMicros,
    topologyChanged: topologyWatch(exec, keyspace),
  };
  return new WriteBatcher(sender, options);
}
