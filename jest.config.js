/** Tests run from TypeScript sources (ts-jest, transpile only: `npm run typecheck` checks types).
 *  End-to-end tests spawn the built binaries in dist/, so `npm test` builds first. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/abuse/'], // npm run test:abuse (jest.abuse.config.js)
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60000,
  // Real processes and a real database: two cores, so keep parallelism modest.
  maxWorkers: 2,
};
