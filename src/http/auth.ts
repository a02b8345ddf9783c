/** Bearer auth as glue around TokenVerifier: 401 with a plain JSON body, before any byte of the body is read. */
import type { NextFunction, Request, Response } from 'express';
import { TokenVerifier } from '../keys/tokens';
import type { TokenConfig } from '../config/types';
import { sendError } from './respond';
import { logContext } from './logging';

export const UNAUTHORIZED = 'missing or unknown bearer token';

export interface AuthedLocals {
  token: TokenConfig;
}

export function bearerAuth(tokens: readonly TokenConfig[]) {
  const verifier = new TokenVerifier(tokens);
  return function bearer(req: Request, res: Response, next: NextFunction): void {
    const token = verifier.verifyAuthorization(req.headers.authorization);
    if (token === null) {
      // The request body is never read: Node discards it after this reply.
      sendError(res, 401, UNAUTHORIZED, { 'WWW-Authenticate': 'Bearer realm="sa-forge-signer"' });
      return;
    }
    (res.locals as AuthedLocals).token = token;
    logContext(res).tokenName = token.name;
    next();
  };
}
