/**
 * The endpoints of one cluster, in the order calls should try them. Healthy endpoints come first, in the order
 * they are configured; an endpoint that fails is set aside for a cool-down (doubling with each failure in a row,
 * and at least as long as its Retry-After asked) and goes behind every healthy one; once the cool-down is over it
 * is tried again in its configured place, and a success clears its record. When every endpoint is cooling down,
 * the one that comes back first goes first. docs/chain.md describes it for operators.
 */
export interface EndpointPoolSettings {
  /** Cool-down after a first failure; doubles with each further failure in a row, up to 16 times. */
  cooldownMs: number;
  now?: () => number;
}

export interface EndpointHealth {
  /** Failures since the endpoint last answered. */
  failures: number;
  /** Epoch ms before which the endpoint is not preferred (0: healthy). */
  coolingUntil: number;
  /** Epoch ms before which the endpoint asked not to be called again (its Retry-After; 0: none). */
  notBefore: number;
}

export interface EndpointPool<E> {
  /** Every endpoint, best first. */
  order(): E[];
  /** The endpoint the next call should try. */
  best(): E;
  ok(endpoint: E): void;
  /** A transient failure of `endpoint`; `retryAfterMs` when it said how long to stay away. */
  fail(endpoint: E, retryAfterMs?: number): void;
  health(endpoint: E): Readonly<EndpointHealth>;
  /** Whether the endpoint is in a cool-down now. */
  coolingDown(endpoint: E): boolean;
}

const MAX_COOLDOWN_DOUBLINGS = 4;

export function createEndpointPool<E>(endpoints: readonly E[], settings: EndpointPoolSettings): EndpointPool<E> {
  const [first] = endpoints;
  if (first === undefined) throw new RangeError('an endpoint pool needs at least one endpoint');
  const now = settings.now ?? Date.now;
  const state = new Map<E, EndpointHealth>(endpoints.map((e) => [e, { failures: 0, coolingUntil: 0, notBefore: 0 }]));
  const healthOf = (e: E): EndpointHealth => {
    const h = state.get(e);
    if (!h) throw new RangeError('not an endpoint of this pool');
    return h;
  };
  const order = (): E[] => {
    const t = now();
    const healthy = endpoints.filter((e) => healthOf(e).coolingUntil <= t);
    const cooling = endpoints
      .filter((e) => healthOf(e).coolingUntil > t)
      .sort((a, b) => healthOf(a).coolingUntil - healthOf(b).coolingUntil);
    return [...healthy, ...cooling];
  };
  return {
    order,
    best: () => order()[0] ?? first,
    ok(e) {
      const h = healthOf(e);
      h.failures = 0;
      h.coolingUntil = 0;
      h.notBefore = 0;
    },
    fail(e, retryAfterMs) {
      const h = healthOf(e);
      const t = now();
      // Calls that failed together (one batch, one outage) are one failure of the endpoint, not many.
      if (h.coolingUntil <= t) {
        h.failures++;
        const doublings = Math.min(h.failures - 1, MAX_COOLDOWN_DOUBLINGS);
        h.coolingUntil = t + settings.cooldownMs * 2 ** doublings;
      }
      if (retryAfterMs !== undefined) {
        h.notBefore = Math.max(h.notBefore, t + retryAfterMs);
        h.coolingUntil = Math.max(h.coolingUntil, h.notBefore);
      }
    },
    health(e) {
      return { ...healthOf(e) };
    },
    coolingDown(e) {
      return healthOf(e).coolingUntil > now();
    },
  };
}
