/**
 * The DNS-rebinding guard (403): Host and Origin must name an `allowed_hosts` entry. `/health` and `/ready` may be
 * asked for under any Host (Kubernetes probes by pod IP) but never with an Origin (the rules: ../host-origin.ts).
 */
import type { RequestHandler } from 'express';
import { compileAllowList, guardRequest } from '../host-origin';
import { sendError } from '../send';

export function hostOrigin(allowedHosts: readonly string[]): RequestHandler {
  const allow = compileAllowList(allowedHosts);
  return function hostOriginGuard(req, res, next) {
    const probe = req.method === 'GET' && (req.path === '/health' || req.path === '/ready');
    const verdict = guardRequest(allow, req, probe);
    if (!verdict.ok) {
      sendError(res, 403, verdict.error);
      return;
    }
    next();
  };
}
