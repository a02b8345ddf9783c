/** Tests run from TypeScript sources (ts-jest, transpile only: `npm run typecheck` checks types).
 *  End-to-end tests spawn the built binaries in dist/, so `npm test` builds first. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/abuse/'], // npm run test:abuse (jest.abuse.config.js)
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // age-encryption and its noble/scure dependencies ship only ES modules. Node 20.19+ require()s them natively
    // (src/keys/age-file.ts); jest's module loader does not before Node 24.9, so they are compiled to CommonJS here.
    '/node_modules/(age-encryption|@noble|@scure)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(age-encryption|@noble|@scure)/)'],
  // A temporary SoftHSM2 token directory for the pkcs11 key store's tests (test/support/softhsm-global.ts).
  globalSetup: '<rootDir>/test/support/softhsm-setup.ts',
  globalTeardown: '<rootDir>/test/support/softhsm-teardown.ts',
  testTimeout: 60000,
  // Real processes and a real database: two cores, so keep parallelism modest.
  maxWorkers: 2,
};
