/** Tests run from TypeScript sources (ts-jest, transpile only: `npm run typecheck` checks types).
 *  End-to-end tests spawn the built binaries in dist/, so `npm test` builds first. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/abuse/'], // npm run test:abuse (jest.abuse.config.js)
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // These ship only ES modules: age-encryption with its noble/scure dependencies, iron-session with iron-webcrypto,
    // uint8array-extras and its own cookie. Node 20.19+ require()s them natively (src/keys/age-file.ts,
    // src/operator/session.ts); jest's module loader does not, so they are compiled to CommonJS here.
    '/node_modules/(age-encryption|@biscuit-auth|@noble|@scure|iron-session|iron-webcrypto|uint8array-extras)/.+\\.js$':
      ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', target: 'es2022' } }],
  },
  // Ignored: anything under node_modules that is not one of those (nor a package nested inside one of them).
  transformIgnorePatterns: [
    '^(?!.*/node_modules/(age-encryption|@biscuit-auth|@noble|@scure|iron-session|iron-webcrypto|uint8array-extras)/).*/node_modules/',
  ],
  // A temporary SoftHSM2 token directory for the pkcs11 key store's tests (test/support/softhsm-global.ts).
  globalSetup: '<rootDir>/test/support/softhsm-setup.ts',
  globalTeardown: '<rootDir>/test/support/softhsm-teardown.ts',
  testTimeout: 60000,
  // Real processes and a real database: two cores, so keep parallelism modest.
  maxWorkers: 2,
  // A worker that has run its last file exits on its own (nothing left but its own pipes, measured), but on a busy
  // two-core machine that can take longer than jest's default 500 ms, and jest then kills it and reports a leak
  // that is not there. A real leak (a timer or socket still held) still shows, five seconds later.
  workerGracefulExitTimeout: 5000,
};
