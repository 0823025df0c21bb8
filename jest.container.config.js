/**
 * The container test: the real docker-compose.yml on a real Docker engine, with local stand-in images.
 * Run with `npm run test:container` (tools/container/prepare.sh first installs/starts the engine and builds the images).
 */
module.exports = {
  testTimeout: 900000,
  projects: [
    {
      displayName: 'container',
      testEnvironment: 'node',
      transform: { '^.+\\.(t|j)sx?$': ['@swc/jest'] },
      globalTeardown: '<rootDir>/test/exit-check.ts',
      testMatch: ['<rootDir>/test/container/**/*.test.ts'],
    },
  ],
};
