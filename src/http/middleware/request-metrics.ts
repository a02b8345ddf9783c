/** Counts every request for /metrics when its response closes, by MCP method (or route) and status. */
import type { Request, RequestHandler } from 'express';
import type { Metrics } from '../metrics';
import { requestPath } from '../request-path';

function routeLabel(req: Request): string {
  const path = requestPath(req);
  return path === '/mcp' || path === '/health' || path === '/ready' ? path : '/other';
}

/** `metrics` is asked on each close: the service loads prom-client after it starts answering (serve.ts). */
export function requestMetrics(metrics: () => Metrics | null): RequestHandler {
  return function countRequest(req, res, next) {
    res.once('close', () => metrics()?.request(res.locals.mcp?.method ?? routeLabel(req), res.statusCode));
    next();
  };
}
