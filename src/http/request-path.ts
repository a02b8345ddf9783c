/**
 * The path a request was sent to, without its query. Inside a mounted Router `req.path` is relative to the mount
 * point (`/` for `/mcp`), so what outlives routing — the access line, the metrics label — reads this instead.
 */
import type { Request } from 'express';

export function requestPath(req: Request): string {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
