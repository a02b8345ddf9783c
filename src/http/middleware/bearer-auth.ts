/**
 * Bearer auth (401), before any byte of the body is read: Node discards an unread body after the reply. A bearer
 * value is a configured token, or, when the service has credentials, a credential its root key verifies (its
 * checks are judged once the body says what the request is: ./credential-check.ts). What proved itself goes on
 * `res.locals.token` (and the credential on `res.locals.credential`); later steps see its name, never the value.
 * A credential that does not verify counts against its client address (./credential-failure-limit.ts): past the
 * limit, that address's credentials are answered 429 without being verified.
 */
import type { RequestHandler, Response } from 'express';
import type { CredentialGate } from '../../credentials/gate';
import type { CredentialRefusal } from '../../credentials/refusal';
import type { TokenVerifier } from '../bearer-tokens';
import type { CredentialFailureLimit } from './credential-failure-limit';
import { sendError, sendJson } from '../send';

export const UNAUTHORIZED = 'missing or unknown bearer token';
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="sa-forge-signer"' };
const OPAQUE_PREFIX = 'sfs_';

/** 401 with the refusal as a value: its code, reason, message and, when a check refused, the block and check. */
export function sendCredentialRefusal(res: Response, refusal: CredentialRefusal): void {
  const { message, ...rest } = refusal;
  sendJson(res, 401, JSON.stringify({ error: message, ...rest }), { ...CHALLENGE, 'Cache-Control': 'no-store' });
}

export function bearerAuth(
  verifier: TokenVerifier,
  credentials: { gate: CredentialGate; failures: CredentialFailureLimit } | null = null,
): RequestHandler {
  return function bearer(req, res, next) {
    const header = req.headers.authorization;
    const token = verifier.verifyAuthorization(header);
    if (token !== null) {
      res.locals.token = token;
      next();
      return;
    }
    const presented = header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    if (credentials === null || presented === '' || presented.startsWith(OPAQUE_PREFIX)) {
      sendError(res, 401, UNAUTHORIZED, CHALLENGE);
      return;
    }
    const { gate, failures } = credentials;
    // A throw inside (the library failing to load) is the request's error, not an unhandled rejection.
    // The ledger's revocations are read once before any credential is judged (a replica just started).
    Promise.all([failures.spent(req), gate.ready()])
      .then(([spent]) => {
        if (spent) {
          failures.failed(req, res, next, () =>
            sendError(res, 429, 'rate limit: too many credentials that do not verify'),
          );
          return;
        }
        const verified = gate.verify(presented);
        if (!verified.ok) {
          failures.failed(req, res, next, () => sendCredentialRefusal(res, verified.refusal));
          return;
        }
        const { credential } = verified;
        res.once('close', () => credential.dispose());
        res.locals.token = { name: credential.root.name, keys: credential.root.keys };
        res.locals.credential = credential;
        next();
      })
      .catch(next);
  };
}
