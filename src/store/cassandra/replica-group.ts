import { CqlExecutor } from './cql-executor';

/** Group of every row when the cluster has a single node: all rows share one replica set. */
const SINGLE_NODE_GROUP = '*';

/**
 * The replica group of a routing key: its replica set from the driver's token map (so a batch or a grouped read never
 * fans out from its coordinator), or the partition key itself when the token map is not known.
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
