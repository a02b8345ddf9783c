/**
 * express-rate-limit per token (429 with its standard RateLimit headers and Retry-After). The key is the token's
 * name from `res.locals.token`, which bearer auth set: the limiter never sees the token itself. A credential counts
 * on its own, by its last block's revocation id: each narrowed credential has its own limit, apart from its root's.
 */
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { sendError } from '../send';

export function tokenRateLimit(perMinute: number): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    // draft-7: `RateLimit-Policy` and `RateLimit`, without the per-request hash draft-8's partition key costs.
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (_req, res) =>
      res.locals.credential ? `credential:${res.locals.credential.id}` : (res.locals.token?.name ?? ''),
    handler: (_req, res) =>
      sendError(res, 429, `rate limit: more than ${perMinute} requests in a minute for this token; retry later`),
  });
}
