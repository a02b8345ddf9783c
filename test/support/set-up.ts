/**
 * Suites assign their shared fixtures in `beforeAll` and declare them as always set (`let w: World`), which is
 * true inside every test. Jest still runs `afterAll` when `beforeAll` threw part-way, so teardown reads a fixture
 * through this: possibly unset, so whatever did start is still closed.
 */
export function ifSetUp<T>(fixture: T): T | undefined {
  return fixture;
}
