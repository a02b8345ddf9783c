/**
 * A credential's checks against the request (401 `credential_refused`), once its JSON body has arrived: the tool,
 * the key and the mode are in the body. The keys its checks allow become the request's keys, so the engine's own
 * key rule (a token sees only its keys) holds a narrowed credential to them; the credential (its chain, its spend
 * checks) goes with the request to the engine, which judges the spend checks on the simulation's figures and names
 * the chain in the audit log. Requests with a bearer token pass.
 */
import type { RequestHandler } from 'express';
import { judgeRequest, presentedCredential } from '../../credentials/request';
import { sendCredentialRefusal } from './bearer-auth';

export function credentialCheck(now: () => Date = () => new Date()): RequestHandler {
  return function credentials(req, res, next) {
    const credential = res.locals.credential;
    const token = res.locals.token;
    if (credential === undefined || token === undefined) {
      next();
      return;
    }
    const judged = judgeRequest(credential, req.body, now());
    if (!judged.ok) {
      sendCredentialRefusal(res, judged.refusal);
      return;
    }
    res.locals.token = { name: token.name, keys: judged.keys };
    res.locals.presented = presentedCredential(credential, req.body, now);
    next();
  };
}
