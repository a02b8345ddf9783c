/**
 * JSON-RPC calls that survive a real provider: each call goes to the cluster's best endpoint (see
 * endpoint-pool.ts); a transient failure (transient.ts) of an idempotent call is retried, on the next endpoint at
 * once when another one is healthy, otherwise after a backoff with full jitter or the wait the endpoint asked for
 * (Retry-After, up to a cap). A call that is not idempotent is sent once. Retries stop at the attempt limit, the
 * retry budget, the caller's deadline or its AbortSignal, whichever comes first; the last failure is returned.
 *
 * Calls made together still leave together: the first attempt of every call is queued on its endpoint's
 * transport before the process next waits for I/O, so they share one JSON-RPC batch. docs/chain.md describes it
 * for operators.
 */
import { fullJitterDelay, type BackoffSettings } from './backoff';
import { createEndpointPool, type EndpointPool } from './endpoint-pool';
import { JsonRpcTransport, RpcError, isRpcError } from './json-rpc-transport';
import { RETRY_DEFAULTS } from './retry-defaults';
import { isTransient } from './transient';
import type { CallLimits } from './types';
import { SignerError } from '../util/errors';

export interface RetrySettings {
  /** Attempts after the first; 0 sends every call once. */
  retries: number;
  backoff: BackoffSettings;
  /** Longest Retry-After waited out as asked; a longer one is shortened to this. */
  retryAfterMaxMs: number;
  /** No retry starts (and no wait runs) past this long after the call began. */
  budgetMs: number;
}

export const DEFAULT_RETRY: RetrySettings = Object.freeze({
  retries: RETRY_DEFAULTS.retries,
  backoff: Object.freeze({ baseMs: RETRY_DEFAULTS.backoffBaseMs, maxMs: RETRY_DEFAULTS.backoffMaxMs }),
  retryAfterMaxMs: RETRY_DEFAULTS.retryAfterMaxMs,
  budgetMs: RETRY_DEFAULTS.budgetMs,
});

/** One retry about to happen: for logs, metrics and tests. */
export interface RetryEvent {
  method: string;
  /** 1 for the first retry. */
  retry: number;
  /** The endpoint that failed and the one tried next (scheme, host and port only). */
  failed: string;
  next: string;
  waitMs: number;
  error: RpcError;
}

export interface ResilientRpcOptions {
  urls: readonly string[];
  /** Deadline of one attempt, connection included. */
  timeoutMs: number;
  retry?: RetrySettings;
  cooldownMs?: number;
  random?: () => number;
  onRetry?: (event: RetryEvent) => void;
}

export interface CallPolicy {
  /** Whether sending the call twice has the effect of sending it once (reads; a send of the same bytes). */
  idempotent: boolean;
  limits?: CallLimits;
}

export interface ResilientRpc {
  call(method: string, params: unknown[], policy: CallPolicy): Promise<unknown>;
  /** Scheme, host and port of each endpoint, in configured order. */
  readonly endpoints: readonly string[];
  /** The endpoints' health, best first (for /ready, logs and tests). */
  pool: EndpointPool<JsonRpcTransport>;
  close(): void;
}

type Attempt = { ok: true; value: unknown } | { ok: false; error: unknown; byCaller: boolean };

export function createResilientRpc(opts: ResilientRpcOptions): ResilientRpc {
  if (opts.urls.length === 0) throw new SignerError('config_invalid', 'no RPC endpoint is configured');
  const retry = opts.retry ?? DEFAULT_RETRY;
  const random = opts.random ?? Math.random;
  const transports = opts.urls.map((url) => new JsonRpcTransport(url, opts.timeoutMs));
  const pool = createEndpointPool(transports, { cooldownMs: opts.cooldownMs ?? RETRY_DEFAULTS.cooldownMs });

  /** How long to wait before trying `next` after `failed` failed on retry number `retry`. */
  const waitBefore = (next: JsonRpcTransport, failed: JsonRpcTransport, retryIndex: number): number => {
    const asked = pool.health(next).notBefore - Date.now();
    if (asked > 0) return Math.min(asked, retry.retryAfterMaxMs);
    if (next !== failed && !pool.coolingDown(next)) return 0;
    return fullJitterDelay(retryIndex, retry.backoff, random);
  };

  return {
    endpoints: transports.map((t) => t.endpoint),
    pool,
    close() {
      for (const t of transports) t.close();
    },
    async call(method, params, policy) {
      const limits = policy.limits;
      const stopAt = Math.min(Date.now() + retry.budgetMs, limits?.deadlineAt ?? Number.POSITIVE_INFINITY);
      for (let attempt = 0; ; attempt++) {
        if (limits?.signal?.aborted) throw abortedError(method);
        const endpoint = pool.best();
        const outcome = await bounded(endpoint.call(method, params, { once: !policy.idempotent }), method, limits);
        if (outcome.ok) {
          pool.ok(endpoint);
          return outcome.value;
        }
        const error = outcome.error;
        if (outcome.byCaller || !isRpcError(error) || !isTransient(error)) throw error;
        pool.fail(endpoint, error.retryAfterMs);
        if (!policy.idempotent || attempt >= retry.retries) throw error;
        const next = pool.best();
        const waitMs = waitBefore(next, endpoint, attempt);
        if (Date.now() + waitMs > stopAt) throw error;
        opts.onRetry?.({ method, retry: attempt + 1, failed: endpoint.endpoint, next: next.endpoint, waitMs, error });
        if (!(await pause(waitMs, limits?.signal))) throw abortedError(method);
      }
    },
  };
}

function abortedError(method: string): RpcError {
  return new RpcError('aborted', method, `${method}: cancelled by the caller`);
}

/** The attempt's result, or the caller's abort or deadline if that comes first (the request then runs out alone). */
function bounded(p: Promise<unknown>, method: string, limits: CallLimits | undefined): Promise<Attempt> {
  const settled = p.then(
    (value): Attempt => ({ ok: true, value }),
    (error: unknown): Attempt => ({ ok: false, error, byCaller: false }),
  );
  const signal = limits?.signal;
  const deadlineAt = limits?.deadlineAt;
  if (signal === undefined && deadlineAt === undefined) return settled;
  return new Promise<Attempt>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (a: Attempt): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(a);
    };
    const onAbort = (): void => done({ ok: false, error: abortedError(method), byCaller: true });
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (deadlineAt !== undefined) {
      // The error is made only when the deadline passes: an error captures a stack, and under load that was a
      // measurable share of a sign's CPU for calls that almost always answer in time.
      const late = (): Attempt => ({
        ok: false,
        error: new RpcError('timeout', method, `${method}: no answer before the caller's deadline`),
        byCaller: true,
      });
      timer = setTimeout(() => done(late()), Math.max(0, deadlineAt - Date.now()));
    }
    void settled.then(done);
  });
}

/** Waits `ms`; false when the signal aborted the wait. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
