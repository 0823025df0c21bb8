/**
 * Fault tests on the multi-node stack (3 Cassandra nodes, 3 KRaft brokers on 127.0.0.1–127.0.0.3): a Cassandra node
 * and a Kafka broker killed with kill -9 under load. Run with `npm run test:multinode` (always --runInBand: the tests
 * kill stack nodes). Profile: ADJUNCT_FAULT_PROFILE=full|ci as for test:faults.
 */
// The whole run (global setup and tests) targets the 3+3 stack.
process.env.ADJUNCT_STACK_CASSANDRA_NODES = '3';
process.env.ADJUNCT_STACK_KAFKA_BROKERS = '3';

module.exports = {
  testTimeout: 900000,
  projects: [
    {
      displayName: 'multinode',
      testEnvironment: 'node',
      transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'] },
      globalTeardown: '<rootDir>/test/exit-check.ts',
      // cookie 2.x (a fastify dependency) is ESM-only: let swc turn it into CommonJS for jest.
      transformIgnorePatterns: ['/node_modules/(?!cookie/)'],
      testMatch: ['<rootDir>/test/faults/multinode/**/*.test.ts'],
      globalSetup: '<rootDir>/test/faults/multinode/global-setup.ts',
    },
  ],
};
