/**
 * State changes come from the console's own pages only: a POST must carry an Origin that is exactly the console's
 * (browsers send it on every POST). The Host/Origin guard allows any port of an allowed host, and SameSite cookies
 * ignore ports, so a page of another local service (localhost:3000) would otherwise count as the console's own.
 */
import type { RequestHandler } from 'express';
import { sendError } from '../../http/send';

export function sameOrigin(origin: string): RequestHandler {
  return function exactOrigin(req, res, next) {
    if (req.method === 'GET' || req.method === 'HEAD' || req.headers.origin === origin) {
      next();
      return;
    }
    sendError(res, 403, `a change must come from the console's own page (Origin ${origin})`);
  };
}
