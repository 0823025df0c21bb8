/**
 * Fault-injection suite against the real local stack (kill -9, Cassandra/Kafka outages, rebalances, poison records,
 * hostile configs). Profile: ADJUNCT_FAULT_PROFILE=full|ci (default ci: reduced sizes that fit in a few minutes).
 * Run with `npm run test:faults` (always --runInBand: the tests pause shared services).
 */
module.exports = {
  testTimeout: 600000,
  projects: [
    {
      displayName: 'faults',
      testEnvironment: 'node',
      transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'] },
      globalTeardown: '<rootDir>/test/exit-check.ts',
      setupFilesAfterEnv: ['<rootDir>/test/current-test-file.ts'],
      // cookie 2.x (a fastify dependency) is ESM-only: let swc turn it into CommonJS for jest.
      transformIgnorePatterns: ['/node_modules/(?!cookie/)'],
      testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
      // The multi-node tests need the 3+3 stack: they run with `npm run test:multinode` (jest.multinode.config.js).
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/multinode/'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
  ],
};
