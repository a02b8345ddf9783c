/**
 * The console's session cookie (iron-session: the session is sealed into the cookie itself, so every replica reads it
 * with the shared secret and none keeps state). HttpOnly, SameSite=Strict, Secure (and __Host- prefixed) behind TLS.
 * Every visitor gets a session id, which the CSRF tokens are bound to; a passkey login adds the operator, and lasts
 * `session_ttl_ms` from the login, however active the operator is.
 */
import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { getIronSession, type SessionOptions } from 'iron-session';
import './locals';
import type { ConsoleSession } from './locals';

export interface SessionSettings {
  secret: () => Promise<string>;
  secure: boolean;
  ttlMs: number;
}

/** A cookie name: `__Host-` behind TLS, which a browser accepts only Secure, for path /, from this very host. */
export function cookieName(base: string, secure: boolean): string {
  return secure ? `__Host-${base}` : base;
}

export function sessionOptions(password: string, s: Pick<SessionSettings, 'secure' | 'ttlMs'>): SessionOptions {
  return {
    password,
    cookieName: cookieName('console.session', s.secure),
    ttl: Math.ceil(s.ttlMs / 1000) + 60,
    cookieOptions: { httpOnly: true, sameSite: 'strict', secure: s.secure, path: '/' },
  };
}

/** Loads the session onto res.locals.session, giving a new visitor a session id (the CSRF tokens' binding). */
export function consoleSession(s: SessionSettings): RequestHandler {
  return function loadSession(req, res, next) {
    void (async () => {
      const session = await getIronSession<ConsoleSession>(req, res, sessionOptions(await s.secret(), s));
      if (session.sid === undefined) {
        session.sid = randomBytes(16).toString('base64url');
        await session.save();
      }
      res.locals.session = session;
    })().then(() => next(), next);
  };
}

/** Whether the session holds a login that has not run out at `nowMs`. */
export function loginOf(
  session: ConsoleSession,
  ttlMs: number,
  nowMs: number,
): { operator: string; credential: string } | null {
  if (session.operator === undefined || session.credential === undefined || session.login_at === undefined) return null;
  if (nowMs >= session.login_at + ttlMs) return null;
  return { operator: session.operator, credential: session.credential };
}
