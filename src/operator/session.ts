/**
 * The console's session cookie (iron-session: the session is sealed into the cookie, so every replica reads it with
 * the shared secret). HttpOnly, SameSite=Strict, Secure (and __Host- prefixed) behind TLS. Every visitor gets a
 * session id, which the CSRF tokens are bound to; a passkey login gives a new one, adds the operator, and lasts
 * `session_ttl_ms` from the login, however active the operator is, while the ledger holds a record of that id: a
 * sealed cookie cannot be taken back, so logging out and revoking delete the record instead.
 */
import { createHash, randomBytes } from 'node:crypto';
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

/** What the ledger keeps of a session's id (the hash: the ledger alone opens no session). */
export function sessionKey(sid: string): string {
  return createHash('sha256').update(sid, 'utf8').digest('hex');
}

/** Whether the cookie holds a login that has not run out at `nowMs` (whether it was ended is the ledger's to say). */
export function loginOf(
  session: ConsoleSession,
  ttlMs: number,
  nowMs: number,
): { operator: string; credential: string; sid: string } | null {
  const { sid, operator, credential, login_at: at } = session;
  if (sid === undefined || operator === undefined || credential === undefined || at === undefined) return null;
  if (nowMs >= at + ttlMs) return null;
  return { operator, credential, sid };
}
