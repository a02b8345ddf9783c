/**
 * CSRF protection for every state change on the console (csrf-csrf, double submit): a page carries a token bound to
 * the session id, the script sends it back in X-CSRF-Token, and the cookie half travels HttpOnly, SameSite=Strict.
 * A request without a matching pair is refused (403) before any route runs.
 */
import { createHmac } from 'node:crypto';
import { doubleCsrf, type DoubleCsrfUtilities } from 'csrf-csrf';
import './locals';
import { cookieName } from './session';

export function consoleCsrf(opts: { secret: () => string; secure: boolean }): DoubleCsrfUtilities {
  return doubleCsrf({
    // A key of its own, derived from the session secret: the two never serve as each other.
    getSecret: () => createHmac('sha256', opts.secret()).update('console csrf').digest('base64url'),
    getSessionIdentifier: (req) => req.res?.locals.session?.sid ?? '',
    cookieName: cookieName('console.csrf', opts.secure),
    cookieOptions: { sameSite: 'strict', secure: opts.secure, httpOnly: true, path: '/' },
    getCsrfTokenFromRequest: (req) => req.headers['x-csrf-token'],
    errorConfig: { statusCode: 403, message: 'missing or invalid CSRF token: reload the page and try again' },
  });
}
