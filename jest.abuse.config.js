/** The abuse suite (issue 7), apart from `npm test`: `npm run test:abuse` runs it through test/abuse/run.js.
 *  One suite at a time: the load and crash suites measure a service process on a 2-core machine, and the
 *  secret scan must run after everything else has left its artefacts (test/abuse/sequencer.js orders them). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/abuse'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testSequencer: '<rootDir>/test/abuse/sequencer.js',
  testTimeout: 120000,
  maxWorkers: 1,
};
