/**
 * A logged-in operator, or nothing: the session must hold a login younger than `session_ttl_ms`, by an operator still
 * in the config, with a passkey still enrolled (`operator revoke` ends every session of that operator at once).
 * Pages send a browser to /login; the API answers 401.
 */
import type { RequestHandler } from 'express';
import type { OperatorConfig } from '../../config/types';
import type { Ledger } from '../../ledger/types';
import { sendError } from '../../http/send';
import '../locals';
import { loginOf } from '../session';

export interface RequireOperatorDeps {
  ledger: () => Promise<Ledger>;
  operators: () => readonly OperatorConfig[];
  ttlMs: number;
  nowMs: () => number;
}

export function requireOperator(deps: RequireOperatorDeps, answer: 'page' | 'api'): RequestHandler {
  return async function signedIn(req, res, next) {
    const session = res.locals.session;
    const login = session ? loginOf(session, deps.ttlMs, deps.nowMs()) : null;
    const operator = login ? deps.operators().find((o) => o.name === login.operator) : undefined;
    const passkey = login && operator ? await (await deps.ledger()).getPasskey(login.credential) : null;
    if (!login || !operator || passkey?.operator !== operator.name) {
      if (answer === 'page') res.redirect(303, '/login');
      else sendError(res, 401, 'log in with your passkey first (your session is missing, expired or revoked)');
      return;
    }
    res.locals.operator = { name: operator.name, role: operator.role, credential: login.credential };
    next();
  };
}

/** Admins only (halts and resumes). */
export function requireAdmin(): RequestHandler {
  return function admin(_req, res, next) {
    if (res.locals.operator?.role !== 'admin') {
      sendError(res, 403, 'only an operator with role admin may halt or resume keys');
      return;
    }
    next();
  };
}
