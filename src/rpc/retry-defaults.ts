/**
 * Default retry and failover settings of the chain client, shared by the client (when built without them) and
 * the config's `timings` defaults, so both say the same. docs/chain.md explains each.
 */
export const RETRY_DEFAULTS = Object.freeze({
  /** Attempts after the first, on a transient failure of an idempotent call. */
  retries: 3,
  /** Ceiling of the first backoff wait; it doubles per retry. */
  backoffBaseMs: 200,
  /** Largest backoff wait. */
  backoffMaxMs: 5_000,
  /** Longest Retry-After honoured as asked; a longer one is shortened to this. */
  retryAfterMaxMs: 10_000,
  /** No retry starts, and no wait ends, later than this after the call began. */
  budgetMs: 20_000,
  /** Cool-down of a failed endpoint (doubling with each failure in a row). */
  cooldownMs: 30_000,
});
