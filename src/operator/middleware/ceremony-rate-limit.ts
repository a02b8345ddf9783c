/**
 * A bound on the console's API (express-rate-limit, 429): every ceremony writes a nonce to the ledger, and logins and
 * enrollments answer anyone who reaches the listener, so a flood must not fill the ledger or keep it busy. Counted
 * for the whole listener, not per address: behind a proxy every request comes from the proxy, and a few operators
 * stay far below the bound.
 */
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { sendError } from '../../http/send';

export const CONSOLE_API_PER_MINUTE = 300;
/** The pending-approvals poll: an open page asks every PENDING_POLL_MS (console-script.ts), twenty tabs stay below. */
export const PENDING_POLLS_PER_MINUTE = 600;

export function ceremonyRateLimit(perMinute = CONSOLE_API_PER_MINUTE): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: () => 'console',
    handler: (_req, res) =>
      sendError(res, 429, `the console answers at most ${String(perMinute)} requests a minute; retry shortly`),
  });
}
