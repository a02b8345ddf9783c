/**
 * The `/mcp` endpoint as an Express Router. POST: the body must arrive in time (408), is parsed as JSON (413/415),
 * is judged against the checks of a credential when one was presented (401), takes a place under the in-flight cap (503) only once it has arrived, then goes to the JSON-RPC service, which
 * tells the cap when a sign starts waiting for a person. GET and
 * DELETE are 405: a server of MCP 2026-07-28 opens no event stream and keeps no session.
 */
import { Router, type Request, type Response } from 'express';
import type { McpService } from '../mcp/service';
import { parseErrorReply } from '../mcp/envelope';
import { bodyDeadline } from './middleware/body-deadline';
import { credentialCheck } from './middleware/credential-check';
import { inFlightCap, type InFlightLimits } from './middleware/in-flight-cap';
import { jsonBody } from './middleware/json-body';
import { sendError, sendJson } from './send';
import type { ServiceState } from './service-state';

export interface McpRouterOptions {
  mcp: McpService;
  state: ServiceState;
  bodyLimitBytes: number;
  bodyTimeoutMs: number;
  inFlight: InFlightLimits;
}

/** An abort signal for the tool: a client that disconnects before its answer cancels the request. */
function cancelledWhenGone(res: Response): () => AbortSignal {
  return () => {
    const controller = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    return controller.signal;
  };
}

export function mcpRouter(opts: McpRouterOptions): Router {
  const answer = async (req: Request, res: Response): Promise<void> => {
    // A POST without any body (no Content-Length, no chunks) is left unparsed: it is not JSON either.
    if (req.body === undefined) {
      sendJson(res, 400, parseErrorReply());
      return;
    }
    const token = res.locals.token;
    if (token === undefined) throw new Error('the /mcp router runs behind bearer auth');
    const reply = await opts.mcp.handle({
      message: req.body,
      rawHeaders: req.rawHeaders,
      principal: {
        kind: 'token',
        name: token.name,
        keys: token.keys,
        ...(res.locals.presented ? { credential: res.locals.presented } : {}),
      },
      signal: cancelledWhenGone(res),
      onProgress: res.locals.signProgress,
    });
    res.locals.mcp = { method: reply.method, read: reply.read === true, tool: reply.tool ?? null };
    if (res.destroyed) return;
    // 202 with no body: the head is written alone, so no Content-Length announces a body that is not there.
    if (reply.body === null) res.writeHead(reply.status).end();
    else sendJson(res, reply.status, reply.body);
  };

  const router = Router();
  router.post(
    '/',
    bodyDeadline(opts.bodyTimeoutMs),
    ...jsonBody(opts.bodyLimitBytes),
    credentialCheck(),
    inFlightCap(opts.inFlight, opts.state),
    answer,
  );
  router.all('/', (_req, res) => sendError(res, 405, 'use POST', { Allow: 'POST' }));
  return router;
}
