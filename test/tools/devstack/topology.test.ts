/** The dev stack's topology: node names and addresses of the single-node and multi-node stacks, and their env settings. */
import { FIRST_NODE_ADDRESS_ENV_VAR, nodeHost, stackEndpoints, stackSettings, TOPOLOGY_ENV_VARS } from '../../../tools/devstack/endpoints';
import { describeTopology, sameTopology, stackServices } from '../../../tools/devstack/topology';

const saved = { ...process.env };
afterEach(() => {
  for (const k of [...Object.values(TOPOLOGY_ENV_VARS), FIRST_NODE_ADDRESS_ENV_VAR, 'ADJUNCT_KAFKA_PORT', 'ADJUNCT_CASSANDRA_PORT']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe('dev stack topology', () => {
  it('keeps the single-node stack as it was: kafka, cassandra, registry on 127.0.0.1', () => {
    for (const k of Object.values(TOPOLOGY_ENV_VARS)) delete process.env[k];
    delete process.env[FIRST_NODE_ADDRESS_ENV_VAR];
    const s = stackSettings();
    expect({ c: s.cassandraNodes, k: s.kafkaBrokers }).toEqual({ c: 1, k: 1 });
    expect(stackServices(s).map((svc) => `${svc.name}@${svc.host}`)).toEqual([
      'kafka@127.0.0.1',
      'cassandra@127.0.0.1',
      'registry@127.0.0.1',
    ]);
    process.env.ADJUNCT_KAFKA_PORT = '19092';
    process.env.ADJUNCT_CASSANDRA_PORT = '19042';
    expect(stackEndpoints()).toMatchObject({
      kafkaBrokers: ['127.0.0.1:19092'],
      cassandraContactPoints: ['127.0.0.1'],
      cassandraPort: 19042,
    });
  });

  it('puts node i of a ring on 127.0.0.i, with every node in the endpoints', () => {
    process.env[TOPOLOGY_ENV_VARS.cassandraNodes] = '3';
    process.env[TOPOLOGY_ENV_VARS.kafkaBrokers] = '3';
    const s = stackSettings();
    expect(stackServices(s).map((svc) => `${svc.name}@${svc.host}`)).toEqual([
      'kafka-1@127.0.0.1',
      'kafka-2@127.0.0.2',
      'kafka-3@127.0.0.3',
      'cassandra-1@127.0.0.1',
      'cassandra-2@127.0.0.2',
      'cassandra-3@127.0.0.3',
      'registry@127.0.0.1',
    ]);
    expect(stackEndpoints()).toMatchObject({
      kafkaBrokers: [1, 2, 3].map((i) => `127.0.0.${i}:${s.kafkaPort}`),
      cassandraContactPoints: ['127.0.0.1', '127.0.0.2', '127.0.0.3'],
    });
    expect(describeTopology(s)).toBe('3 Cassandra nodes, 3 Kafka brokers');
    expect(sameTopology(s, { cassandraNodes: 3, kafkaBrokers: 1 })).toBe(false);
  });

  it('moves the nodes to other loopback addresses with ADJUNCT_FIRST_NODE_ADDRESS', () => {
    process.env[FIRST_NODE_ADDRESS_ENV_VAR] = '127.0.0.11';
    expect([1, 2, 3].map(nodeHost)).toEqual(['127.0.0.11', '127.0.0.12', '127.0.0.13']);
    process.env[FIRST_NODE_ADDRESS_ENV_VAR] = '10.0.0.1';
    expect(() => nodeHost(1)).toThrow(/must be a loopback address/);
    process.env[FIRST_NODE_ADDRESS_ENV_VAR] = '127.0.0.254';
    expect(() => nodeHost(2)).toThrow(/no loopback address for node 2/);
  });

  it('rejects node counts outside 1..5', () => {
    for (const bad of ['0', '6', '2.5', 'three']) {
      process.env[TOPOLOGY_ENV_VARS.cassandraNodes] = bad;
      expect(() => stackSettings()).toThrow(new RegExp(`ADJUNCT_STACK_CASSANDRA_NODES=${bad} must be a whole number from 1 to 5`));
    }
  });
});
