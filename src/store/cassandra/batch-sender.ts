import { nextWriteMicros, CqlExecutor } from './cql-executor';
import { replicaGroupOf } from './replica-group';
import { BatchSender, WriteBatcher, WriteBatcherOptions } from './write-batcher';

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
