/**
 * The console answers people with passkeys, never agents: a request carrying an Authorization header (an agent's
 * bearer token, any credential) is refused before anything else reads it, so a token opens nothing here.
 */
import type { RequestHandler } from 'express';
import { sendError } from '../../http/send';

export function refuseBearer(): RequestHandler {
  return function noBearer(req, res, next) {
    if (req.headers.authorization !== undefined) {
      sendError(res, 401, 'the operator console takes no bearer tokens: an operator logs in with a passkey');
      return;
    }
    next();
  };
}
