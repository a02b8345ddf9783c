/**
 * A credential's checks against the request (401 `credential_refused`), once its JSON body has arrived: the tool,
 * the key and the mode are in the body. The keys its checks allow become the request's keys, so the engine's own
 * key rule (a token sees only its keys) holds a narrowed credential to them; its spend checks go with the request
 * to the engine, which judges them on the simulation's figures. Requests with a bearer token pass.
 */
import type { RequestHandler } from 'express';
import { judgeRequest, spendCheckFor } from '../../credentials/request';
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
    res.locals.credentialSpend = spendCheckFor(credential, req.body, now);
    next();
  };
}
