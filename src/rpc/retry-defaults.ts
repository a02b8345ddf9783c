/**
 * Default retry and failover settings of the chain client when built without them: the config's `timings`
 * defaults (src/config/sections/timings.ts), under the client's names. docs/chain.md explains each.
 */
import { DEFAULT_TIMINGS } from '../config/sections/timings';

export const RETRY_DEFAULTS = Object.freeze({
  /** Attempts after the first, on a transient failure of an idempotent call. */
  retries: DEFAULT_TIMINGS.rpc_retries,
  /** Ceiling of the first backoff wait; it doubles per retry. */
  backoffBaseMs: DEFAULT_TIMINGS.rpc_backoff_base_ms,
  /** Largest backoff wait. */
  backoffMaxMs: DEFAULT_TIMINGS.rpc_backoff_max_ms,
  /** Longest Retry-After honoured as asked; a longer one is shortened to this. */
  retryAfterMaxMs: DEFAULT_TIMINGS.rpc_retry_after_max_ms,
  /** No retry starts, and no wait ends, later than this after the call began. */
  budgetMs: DEFAULT_TIMINGS.rpc_retry_budget_ms,
  /** Cool-down of a failed endpoint (doubling with each failure in a row). */
  cooldownMs: DEFAULT_TIMINGS.rpc_endpoint_cooldown_ms,
});
