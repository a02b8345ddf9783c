/**
 * Which RPC failures are worth another attempt: the ones that say "not now" or "not this endpoint" rather than
 * "not this request". A refusal about the request itself (invalid params, an unknown method, a preflight error,
 * a 400 or 401) would fail the same way again, so it is returned at once.
 */
import type { RpcError } from './json-rpc-transport';

/** Request timeout, too early, rate limited, and every server-side 5xx (502/503/504 from gateways above all). */
const RETRYABLE_STATUS = new Set([408, 425, 429]);

/**
 * JSON-RPC codes that mean the node, not the request, is the problem: 429 (some providers rate-limit in the
 * body), -32005 (the node is unhealthy or behind the cluster), -32016 (the node has not reached the read's
 * `minContextSlot` yet: a moment later, or another endpoint, has).
 */
const RETRYABLE_RPC_CODES = new Set([429, -32005, -32016]);

export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUS.has(status) || (status >= 500 && status <= 599);
}

export function isTransient(e: RpcError): boolean {
  if (e.httpStatus !== undefined && isRetryableStatus(e.httpStatus)) return true;
  switch (e.kind) {
    case 'timeout':
      return true;
    case 'transport':
      // No status: the connection was refused, reset or cut short. A status we got here is a final 4xx.
      return e.httpStatus === undefined;
    case 'node':
      return e.rpcCode !== undefined && RETRYABLE_RPC_CODES.has(e.rpcCode);
    case 'shape':
    case 'aborted':
      return false;
  }
}
