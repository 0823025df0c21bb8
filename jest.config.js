/** Jest projects: fast unit tests, and integration tests against the real local stack (started by globalSetup). */
const transform = { '^.+\\.(t|j)sx?$': ['@swc/jest'] };
module.exports = {
  testTimeout: 120000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['<rootDir>/test/integration/', '<rootDir>/test/faults/'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
    },
  ],
};
