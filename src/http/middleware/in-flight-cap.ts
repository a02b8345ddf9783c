/**
 * The cap on requests being answered at once (503 busy, Retry-After 1), and no new work while the process drains
 * (503, Connection: close). Mounted after the body parser: a request whose body is still arriving holds no place,
 * so clients that send slowly cannot keep a halt from being answered (docs/running.md, "Sockets").
 */
import type { RequestHandler } from 'express';
import { sendError } from '../send';
import type { ServiceState } from '../service-state';

export function inFlightCap(limit: number, state: ServiceState): RequestHandler {
  return function capInFlight(_req, res, next) {
    if (state.draining) {
      sendError(res, 503, 'shutting down; retry on another replica', { 'Retry-After': '5', Connection: 'close' });
      return;
    }
    if (state.inFlight >= limit) {
      sendError(res, 503, 'busy; retry shortly', { 'Retry-After': '1' });
      return;
    }
    state.inFlight++;
    res.once('close', () => state.inFlight--);
    next();
  };
}
