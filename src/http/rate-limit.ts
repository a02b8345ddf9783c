/**
 * The per-token request limit: a fixed window per token name that starts with the token's first request, as
 * express-rate-limit's memory store counts. It replaces express-rate-limit on the request path because that
 * middleware was measured here at ~12 % of the service's CPU per request (four awaits, a property defined on
 * every request object); this is the same rule, counted synchronously.
 */
export interface RateLimitVerdict {
  allowed: boolean;
  /** When refused: whole seconds until the token's window resets (for Retry-After), at least 1; else 0. */
  retryAfterSeconds: number;
}

/** One verdict for every admitted request: nothing is allocated or computed on the common path. */
const ALLOWED: RateLimitVerdict = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

export class TokenRateLimiter {
  private readonly windows = new Map<string, { count: number; resetsAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one request for `token` and says whether it is within the limit. */
  take(token: string): RateLimitVerdict {
    const now = this.now();
    let w = this.windows.get(token);
    if (w === undefined || now >= w.resetsAt) {
      w = { count: 0, resetsAt: now + this.windowMs };
      this.windows.set(token, w);
    }
    w.count++;
    if (w.count <= this.limit) return ALLOWED;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((w.resetsAt - now) / 1000)) };
  }
}
