/** Jest projects: fast unit tests, and integration tests against the real local stack (started by globalSetup). */
const transform = { '^.+\\.(t|j)sx?$': ['@swc/jest'] };
// cookie 2.x (a fastify dependency) is ESM-only: let swc turn it into CommonJS for jest.
const transformIgnorePatterns = ['/node_modules/(?!cookie/)'];
module.exports = {
  testTimeout: 120000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/exit-check.ts',
      setupFilesAfterEnv: ['<rootDir>/test/current-test-file.ts'],
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['<rootDir>/test/integration/', '<rootDir>/test/faults/', '<rootDir>/test/container/'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      globalTeardown: '<rootDir>/test/exit-check.ts',
      setupFilesAfterEnv: ['<rootDir>/test/current-test-file.ts'],
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
  ],
};
