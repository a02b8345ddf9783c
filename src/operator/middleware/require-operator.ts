/**
 * A logged-in operator, or nothing: the cookie must hold a login younger than `session_ttl_ms`, by an operator still
 * in the config, that the ledger still holds (logout, `operator revoke` and a new login in the same browser end it
 * there, for every replica at once). A login of an operator no longer configured is ended when seen, so it does not
 * come back if the name is configured again. Pages send a browser to /login; the API answers 401.
 */
import type { RequestHandler } from 'express';
import type { OperatorConfig } from '../../config/types';
import type { Ledger } from '../../ledger/types';
import { sendError } from '../../http/send';
import '../locals';
import { loginOf, sessionKey } from '../session';

export interface RequireOperatorDeps {
  ledger: () => Promise<Ledger>;
  operators: () => readonly OperatorConfig[];
  ttlMs: number;
  nowMs: () => number;
}

export function requireOperator(deps: RequireOperatorDeps, answer: 'page' | 'api'): RequestHandler {
  return async function signedIn(_req, res, next) {
    const nowMs = deps.nowMs();
    const login = res.locals.session ? loginOf(res.locals.session, deps.ttlMs, nowMs) : null;
    const operator = login ? await liveOperator(deps, login, nowMs) : null;
    if (!login || !operator) {
      if (answer === 'page') res.redirect(303, '/login');
      else sendError(res, 401, 'log in with your passkey first (your session is missing, expired, ended or revoked)');
      return;
    }
    res.locals.operator = { name: operator.name, role: operator.role, credential: login.credential };
    next();
  };
}

/** The configured operator whose login the ledger still holds, or null. */
async function liveOperator(
  deps: RequireOperatorDeps,
  login: { operator: string; sid: string },
  nowMs: number,
): Promise<OperatorConfig | null> {
  const ledger = await deps.ledger();
  const key = sessionKey(login.sid);
  const operator = deps.operators().find((o) => o.name === login.operator);
  if (!operator) {
    await ledger.endSession(key);
    return null;
  }
  const live = await ledger.getSession(key, Math.floor(nowMs / 1000));
  return live?.operator === operator.name ? operator : null;
}

/** Admins only (halts, resumes and credential revocations). */
export function requireAdmin(): RequestHandler {
  return function admin(_req, res, next) {
    if (res.locals.operator?.role !== 'admin') {
      sendError(res, 403, 'only an operator with role admin may halt or resume keys and revoke credentials');
      return;
    }
    next();
  };
}
