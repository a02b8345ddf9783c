/**
 * The HTTP application: every middleware, in the one order that matters, assembled here and nowhere else.
 *
 *   request id + access log → helmet → Host/Origin (403) → probes (/health, /ready) → bearer auth (401, body
 *   unread) → rate limit per token (429) → in-flight cap (503) → JSON body ≤ limit (413/415) → /mcp router
 *
 * Protocol rules live in pure modules (host-origin, mcp/*); the functions here are glue.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import helmet from 'helmet';
import { rateLimit } from 'express-rate-limit';
import type { Logger } from 'pino';
import type { SignerConfig } from '../config/types';
import type { SignerEngine } from '../signer/types';
import { McpService } from '../mcp/service';
import { bearerAuth, type AuthedLocals } from './auth';
import { jsonBody, type RawBodyRequest } from './body';
import { checkHostOrigin, compileAllowList } from './host-origin';
import { httpLogger, logContext } from './logging';
import type { Metrics } from './metrics';
import { sendBytes, sendError } from './respond';

export interface AppDeps {
  config: SignerConfig;
  version: string;
  logger: Logger;
  /** Resolves once the engine is open (tool calls wait for it). */
  engine: () => Promise<SignerEngine>;
  /** The engine if it is open already (readiness never waits). */
  engineIfOpen: () => SignerEngine | null;
  metrics?: Metrics | null;
}

export interface AppState {
  draining: boolean;
  inFlight: number;
}

export interface SignerApp {
  app: express.Express;
  state: AppState;
  mcp: McpService;
}

const HEALTH_BODY = Buffer.from('{"status":"ok"}');
const READY_CACHE_MS = 1000;

export function createApp(deps: AppDeps): SignerApp {
  const { config, metrics } = deps;
  const serve = config.serve;
  const state: AppState = { draining: false, inFlight: 0 };
  const mcp = new McpService({ version: deps.version, paramHeaders: serve.param_headers, engine: deps.engine, log: deps.logger, observer: metrics ?? undefined });
  const allow = compileAllowList(serve.allowed_hosts);

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  // 1. Request id and the access log (one line per request at `info`, on an async destination).
  app.use(httpLogger(deps.logger));
  if (metrics) {
    app.use((req: Request, res: Response, next: NextFunction) => {
      res.once('finish', () => metrics.request(logContext(res).mcpMethod ?? routeLabel(req), res.statusCode));
      next();
    });
  }

  // 2. Security headers.
  app.use(helmet());

  // 3. The DNS-rebinding guard. Probes may name any Host (the pod IP), but never with a foreign Origin.
  app.use((req: Request, res: Response, next: NextFunction) => {
    const probe = req.method === 'GET' && (req.path === '/health' || req.path === '/ready');
    const verdict = checkHostOrigin(allow, req.headers.host, req.headers.origin, probe);
    if (!verdict.ok) return sendError(res, 403, verdict.error);
    res.locals.hostAllowed = verdict.hostAllowed;
    next();
  });

  // 4. Probes: liveness, and readiness (ledger reachable, RPC on the right genesis; cached briefly).
  app.get('/health', (_req: Request, res: Response) => sendBytes(res, 200, HEALTH_BODY));
  let readyCache: { at: number; ok: boolean; detail: Record<string, string> } | null = null;
  app.get('/ready', async (_req: Request, res: Response) => {
    const engine = deps.engineIfOpen();
    if (state.draining) return sendError(res, 503, 'shutting down');
    if (!engine) return sendBytes(res, 503, JSON.stringify({ status: 'starting' }));
    if (!readyCache || Date.now() - readyCache.at > READY_CACHE_MS) {
      const r = await engine.ready().catch((e: unknown) => ({ ok: false, detail: { engine: (e as Error).message } }));
      readyCache = { at: Date.now(), ...r };
      if (!r.ok) deps.logger.warn({ detail: r.detail }, 'not ready');
    }
    // The detail (error texts) only for callers on an allowed Host; a probe by pod IP gets the verdict alone.
    const body = { status: readyCache.ok ? 'ready' : 'not ready', ...(res.locals.hostAllowed ? { detail: readyCache.detail } : {}) };
    sendBytes(res, readyCache.ok ? 200 : 503, JSON.stringify(body));
  });

  // 5. Bearer token, before the body is read.
  app.use(bearerAuth(serve.tokens));

  // 6. Rate limit per token name.
  app.use(
    rateLimit({
      windowMs: 60_000,
      limit: serve.rate_limit_per_minute,
      standardHeaders: false,
      legacyHeaders: false,
      validate: false,
      keyGenerator: (_req: Request, res: Response) => (res.locals as AuthedLocals).token.name,
      handler: (req: Request, res: Response) => {
        const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
        const seconds = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : 60;
        sendError(res, 429, `rate limit: more than ${serve.rate_limit_per_minute} requests in a minute for this token; retry later`, { 'Retry-After': String(seconds) });
      },
    }),
  );

  // 7. Cap on requests in flight (and no new work while draining).
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (state.draining) return sendError(res, 503, 'shutting down; retry on another replica', { 'Retry-After': '5', Connection: 'close' });
    if (state.inFlight >= serve.max_in_flight) return sendError(res, 503, 'busy; retry shortly', { 'Retry-After': '1' });
    state.inFlight++;
    metrics?.inFlight.inc();
    let counted = true;
    const release = (): void => {
      if (!counted) return;
      counted = false;
      state.inFlight--;
      metrics?.inFlight.dec();
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  });

  // 8. The MCP endpoint: POST only, a bounded JSON body, then the JSON-RPC router.
  const readBody = jsonBody(serve.body_limit_bytes);
  app.post('/mcp', readBody, (req: RawBodyRequest, res: Response) => {
    const token = (res.locals as AuthedLocals).token;
    const aborted = new AbortController();
    // A client that disconnects before its answer cancels the request (streamable-http §Cancellation).
    const onClose = (): void => {
      if (!res.writableFinished) aborted.abort();
    };
    res.once('close', onClose);
    const reply = mcp.handle({
      body: req.rawBody ?? Buffer.alloc(0),
      rawHeaders: req.rawHeaders,
      principal: { kind: 'token', name: token.name, keys: token.keys },
      signal: aborted.signal,
    });
    const send = (r: { status: number; body: Buffer | null; method: string | null }): void => {
      logContext(res).mcpMethod = r.method;
      if (res.destroyed) return;
      if (r.body === null) {
        res.statusCode = r.status;
        res.end();
      } else sendBytes(res, r.status, r.body);
    };
    if (reply instanceof Promise) {
      reply.then(send, (e: unknown) => {
        deps.logger.error({ err: (e as Error).message }, 'MCP handler failed');
        if (!res.headersSent) sendError(res, 500, 'internal error');
      });
    } else send(reply);
  });
  app.all('/mcp', (_req: Request, res: Response) => sendError(res, 405, 'use POST', { Allow: 'POST' }));
  app.use((_req: Request, res: Response) => sendError(res, 404, 'not found'));

  return { app, state, mcp };
}

function routeLabel(req: Request): string {
  const p = req.path;
  return p === '/mcp' || p === '/health' || p === '/ready' ? p : '/other';
}
