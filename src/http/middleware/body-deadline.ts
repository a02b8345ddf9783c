/**
 * A body must arrive within `ms` of its headers (408, then the connection is closed): a client that dribbles a body
 * in byte by byte is cut off instead of holding a socket and a parser for minutes.
 */
import type { RequestHandler } from 'express';
import { sendError } from '../send';

export function bodyDeadline(ms: number): RequestHandler {
  return function awaitBodyInTime(req, res, next) {
    if (req.complete) {
      next();
      return;
    }
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      res.once('finish', () => req.socket.destroy());
      sendError(res, 408, `the request body did not arrive within ${ms} ms`, { Connection: 'close' });
    }, ms);
    const stop = (): void => clearTimeout(timer);
    req.once('end', stop);
    res.once('close', stop);
    next();
  };
}
