/**
 * Failed credential verifications, limited per client address with express-rate-limit (429 with its standard
 * RateLimit headers and Retry-After). Verifying a credential's signature chain costs CPU a bogus value can make the
 * service spend, so once an address has used up its failures in the window, a credential it presents is answered
 * 429 before any verification runs. Only failures count: an agent whose credentials verify is never held back by
 * this limit (its own rate limit, per credential, is ./token-rate-limit.ts). IPv6 addresses count by their /56,
 * as express-rate-limit's own key generator does, so one host cannot escape the limit by changing its address.
 */
import type { NextFunction, Request, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { sendError } from '../send';

export interface CredentialFailureLimit {
  /** Whether this client has used up its failures in the window: then its credential is not verified. */
  spent(req: Request): Promise<boolean>;
  /**
   * Counts a failure and answers it: `refuse` (the 401) within the limit, 429 past it (also while the window the
   * limit was spent in lasts). An error of the limiter's store goes to `next`.
   */
  failed(req: Request, res: Response, next: NextFunction, refuse: () => void): void;
}

const clientKey = (req: Request): string => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? '');

export function credentialFailureLimit(perMinute: number): CredentialFailureLimit {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: clientKey,
    handler: (_req, res) =>
      sendError(
        res,
        429,
        `rate limit: more than ${perMinute} credentials that do not verify in a minute from this address; retry later with a credential this signer issued`,
      ),
  });
  return {
    async spent(req) {
      const info = await limiter.getKey(clientKey(req));
      return info !== undefined && info.totalHits >= perMinute && (info.resetTime?.getTime() ?? 0) > Date.now();
    },
    failed(req, res, next, refuse) {
      Promise.resolve(
        limiter(req, res, (err?: unknown) => {
          if (err === undefined) refuse();
          else next(err);
        }),
      ).catch(next);
    },
  };
}
