/**
 * The places of requests being answered at once (503 busy, Retry-After 1), and no new work while the process
 * drains (503, Connection: close). Mounted after the body parser: a request whose body is still arriving holds no
 * place, so clients that send slowly cannot keep a halt from being answered (docs/running.md, "Sockets").
 *
 * Work (`check`, `sign`, `key_show`) takes one of `max_in_flight` places and one of its token's
 * `max_in_flight_per_token`, so one token that fills its share meets 503 while the others are served. What must
 * always be answered takes no place: `halt` (an agent pulling the brake must never wait behind anything, and
 * during a drain it is the one call still answered, since the signs still running are what it stops) and the answers
 * served from memory (discovery, the lists, a resource).
 *
 * A sign that starts waiting for a person (an operator's approval) gives its place back for the rest of its
 * request and takes one of its token's waiting places instead (as many as its share of work): the minutes an
 * operator takes hold no place meant for work. A token whose waiting places are all taken keeps the place, so the
 * waits one agent piles up meet its own 503s and never another token's.
 *
 * Shares are counted by the token's name (unique, and what logs show), never its secret: a reload that gives a token
 * a new secret keeps its count; a token a reload removes or renames keeps its running requests' places until they
 * are answered, and a new name starts a share of its own.
 */
import type { RequestHandler } from 'express';
import { isRecord } from '../../util/is-record';
import type { SignProgress } from '../../signer/types';
import { sendError } from '../send';
import type { ServiceState } from '../service-state';

export interface InFlightLimits {
  /** Places for work across every token (`serve.max_in_flight`). */
  total: number;
  /** One token's places for work, and for signs waiting for a person (`serve.max_in_flight_per_token`). */
  perToken: number;
}

/** What a request asks, as far as the cap cares. */
type Kind = 'halt' | 'free' | 'work';

/** Methods answered from memory: nothing they do is worth a place. */
const FREE_METHODS = new Set([
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** The body's method and tool name decide; the MCP service dispatches on the very same fields. */
function kindOf(body: unknown): Kind {
  if (!isRecord(body) || typeof body.method !== 'string') return 'work';
  if (FREE_METHODS.has(body.method)) return 'free';
  if (body.method === 'tools/call' && isRecord(body.params) && body.params.name === 'halt') return 'halt';
  return 'work';
}

interface Share {
  working: number;
  waiting: number;
}

export function inFlightCap(limits: InFlightLimits, state: ServiceState): RequestHandler {
  const shares = new Map<string, Share>();
  let working = 0;

  return function capInFlight(req, res, next) {
    const kind = kindOf(req.body);
    if (state.draining) {
      if (kind !== 'halt') {
        sendError(res, 503, 'shutting down; retry on another replica', { 'Retry-After': '5', Connection: 'close' });
        return;
      }
      res.setHeader('Connection', 'close');
    }
    const name = res.locals.token?.name ?? '';
    const share = shares.get(name) ?? { working: 0, waiting: 0 };
    if (kind === 'work') {
      if (working >= limits.total) {
        sendError(res, 503, 'busy; retry shortly', { 'Retry-After': '1' });
        return;
      }
      if (share.working >= limits.perToken) {
        sendError(
          res,
          503,
          `busy: this token has ${limits.perToken} requests being answered (serve.max_in_flight_per_token); retry when one is answered`,
          { 'Retry-After': '1' },
        );
        return;
      }
    }
    // Every request answered counts for the drain and the metrics, whether or not it holds a place.
    state.inFlight++;
    res.once('close', () => state.inFlight--);
    if (kind !== 'work') {
      next();
      return;
    }

    let place: 'working' | 'waiting' | 'none' = 'working';
    working++;
    share.working++;
    shares.set(name, share);
    res.once('close', () => {
      if (place === 'working') {
        working--;
        share.working--;
      } else if (place === 'waiting') share.waiting--;
      place = 'none';
      if (share.working === 0 && share.waiting === 0 && shares.get(name) === share) shares.delete(name);
    });
    res.locals.signProgress = (p: SignProgress): void => {
      if (p.stage !== 'approval' || place !== 'working' || share.waiting >= limits.perToken) return;
      working--;
      share.working--;
      share.waiting++;
      place = 'waiting';
    };
    next();
  };
}
