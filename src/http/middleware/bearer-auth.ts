/**
 * Bearer auth (401), before any byte of the body is read: Node discards an unread body after the reply. The token
 * that proved itself goes on `res.locals.token`; later steps see its name, never the token.
 */
import type { RequestHandler } from 'express';
import type { TokenVerifier } from '../bearer-tokens';
import { sendError } from '../send';

export const UNAUTHORIZED = 'missing or unknown bearer token';

export function bearerAuth(verifier: TokenVerifier): RequestHandler {
  return function bearer(req, res, next) {
    const token = verifier.verifyAuthorization(req.headers.authorization);
    if (token === null) {
      sendError(res, 401, UNAUTHORIZED, { 'WWW-Authenticate': 'Bearer realm="sa-forge-signer"' });
      return;
    }
    res.locals.token = token;
    next();
  };
}
