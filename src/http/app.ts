/**
 * The HTTP application: every middleware, in the one order that matters, assembled here and nowhere else.
 *
 *   request id + access log → helmet headers → Host/Origin (403) → probes (/health, /ready) → bearer auth (401, body
 *   unread) → rate limit per token (429) → in-flight cap (503) → routes: POST /mcp reads a JSON body ≤ limit
 *   (413/415) into the JSON-RPC router; other methods on /mcp 405; anything else 404.
 *
 * Protocol rules live in pure modules (host-origin, mcp/*); the functions here are glue. The stack runs on
 * plain node:http (pipeline.ts says why).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { SignerConfig } from '../config/types';
import type { SignerEngine } from '../signer/types';
import { McpService, type McpReply } from '../mcp/service';
import { bearerAuth } from './auth';
import { readJsonBody } from './body';
import { TokenRateLimiter } from './rate-limit';
import { checkHostOrigin, compileAllowList, repeatedGuardHeader, type HostOriginVerdict } from './host-origin';
import { accessLogWriter, requestIdMiddleware } from './logging';
import type { Metrics } from './metrics';
import { compose, type Middleware, type RequestContext } from './pipeline';
import { sendBytes, sendEmpty, sendError, sendReply, setStaticHeaders } from './respond';

export interface AppDeps {
  config: SignerConfig;
  version: string;
  logger: Logger;
  /** Resolves once the engine is open (tool calls wait for it). */
  engine: () => Promise<SignerEngine>;
  /** The engine if it is open already (readiness never waits). */
  engineIfOpen: () => SignerEngine | null;
  /** Metrics, or a holder filled in later (serve.ts loads prom-client after the listener is up). */
  metrics?: Metrics | { current: Metrics | null } | null;
}

export interface AppState {
  draining: boolean;
  inFlight: number;
}

export interface SignerApp {
  /** The node:http request listener. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  state: AppState;
  mcp: McpService;
}

const HEALTH_BODY = Buffer.from('{"status":"ok"}');
const READY_CACHE_MS = 1000;

export function createApp(deps: AppDeps): SignerApp {
  const { config, logger } = deps;
  const ref =
    deps.metrics && 'current' in deps.metrics
      ? deps.metrics
      : { current: (deps.metrics as Metrics | null | undefined) ?? null };
  const observer = {
    toolResult: (t: string, o: string, f: string | null, ms: number) => ref.current?.toolResult(t, o, f, ms),
  };
  const serve = config.serve;
  const state: AppState = { draining: false, inFlight: 0 };
  const mcp = new McpService({
    version: deps.version,
    paramHeaders: serve.param_headers,
    engine: deps.engine,
    engineIfOpen: deps.engineIfOpen,
    log: logger,
    observer,
  });
  const allow = compileAllowList(serve.allowed_hosts);

  // 1. Request id; the access log (one line per request at `info`, on an asynchronous destination) is written when
  //    the response closes, by the one close listener the pipeline adds (onClose below).
  const accessLine = accessLogWriter(logger);

  // 2. Security headers: helmet's defaults are the same for every response, so helmet runs once here and its
  //    headers go out with every response in the same writeHead (respond.ts).
  setStaticHeaders(
    captureHeaders(helmet() as unknown as (req: unknown, res: unknown, next: (e?: unknown) => void) => void),
  );

  // 3. The DNS-rebinding guard. Probes may name any Host (the pod IP), but never with an Origin.
  // Verdicts are memoised per (Host, Origin, probe): a service sees a handful of distinct values.
  // The last verdict is kept apart: one client sends the same Host and Origin on every request.
  const verdicts = new Map<string, HostOriginVerdict>();
  let last: { probe: boolean; host: string | undefined; origin: string | undefined; verdict: HostOriginVerdict } = {
    probe: false,
    host: '\u0000',
    origin: '\u0000',
    verdict: { ok: false, error: '' },
  };
  const hostOrigin: Middleware = (req, res, next, ctx) => {
    const probe = req.method === 'GET' && (ctx.path === '/health' || ctx.path === '/ready');
    const repeated = repeatedGuardHeader(req.rawHeaders);
    if (repeated !== null) return sendError(res, ctx.id, 403, `several ${repeated} headers: the request is ambiguous`);
    const { host, origin } = req.headers;
    let verdict: HostOriginVerdict | undefined;
    if (last.probe === probe && last.host === host && last.origin === origin) verdict = last.verdict;
    else {
      const memo = `${probe ? 'p' : 'r'}\u0000${host ?? '\u0001'}\u0000${origin ?? '\u0001'}`;
      verdict = verdicts.get(memo);
      if (verdict === undefined) {
        verdict = checkHostOrigin(allow, host, origin, probe);
        if (verdicts.size > 256) verdicts.clear();
        verdicts.set(memo, verdict);
      }
      last = { probe, host, origin, verdict };
    }
    if (!verdict.ok) return sendError(res, ctx.id, 403, verdict.error);
    ctx.hostAllowed = verdict.hostAllowed;
    next();
  };

  // 4. Probes: liveness, and readiness (ledger reachable, RPC on the right genesis; cached briefly).
  let readyCache: { at: number; ok: boolean; detail: Record<string, string> } | null = null;
  const ready = async (res: ServerResponse, ctx: RequestContext): Promise<void> => {
    const engine = deps.engineIfOpen();
    if (state.draining) return sendError(res, ctx.id, 503, 'shutting down');
    if (!engine) return sendBytes(res, ctx.id, 503, JSON.stringify({ status: 'starting' }));
    if (!readyCache || Date.now() - readyCache.at > READY_CACHE_MS) {
      const r = await engine.ready().catch((e: unknown) => ({ ok: false, detail: { engine: (e as Error).message } }));
      readyCache = { at: Date.now(), ...r };
      if (!r.ok) logger.warn({ detail: r.detail }, 'not ready');
    }
    // The detail (error texts) only for callers on an allowed Host; a probe by pod IP gets the verdict alone.
    const body = {
      status: readyCache.ok ? 'ready' : 'not ready',
      ...(ctx.hostAllowed ? { detail: readyCache.detail } : {}),
    };
    sendBytes(res, ctx.id, readyCache.ok ? 200 : 503, JSON.stringify(body));
  };
  const probes: Middleware = (req, res, next, ctx) => {
    if (req.method === 'GET' && ctx.path === '/health') return sendBytes(res, ctx.id, 200, HEALTH_BODY);
    if (req.method === 'GET' && ctx.path === '/ready') return void ready(res, ctx).catch(next);
    next();
  };

  // 5. Bearer token, before the body is read.
  const auth = bearerAuth(serve.tokens);

  // 6. Rate limit per token name (the token the bearer step found).
  const rateLimiter = new TokenRateLimiter(serve.rate_limit_per_minute);
  const limiter: Middleware = (_req, res, next, ctx) => {
    const verdict = rateLimiter.take(ctx.token!.name);
    if (!verdict.allowed) {
      return sendError(
        res,
        ctx.id,
        429,
        `rate limit: more than ${serve.rate_limit_per_minute} requests in a minute for this token; retry later`,
        { 'Retry-After': String(verdict.retryAfterSeconds) },
      );
    }
    next();
  };

  // 7. Cap on requests in flight (and no new work while draining).
  const inFlightCap: Middleware = (_req, res, next, ctx) => {
    if (state.draining)
      return sendError(res, ctx.id, 503, 'shutting down; retry on another replica', {
        'Retry-After': '5',
        Connection: 'close',
      });
    if (state.inFlight >= serve.max_in_flight)
      return sendError(res, ctx.id, 503, 'busy; retry shortly', { 'Retry-After': '1' });
    state.inFlight++;
    ctx.inFlight = true; // released in onClose
    next();
  };

  // 8. Routes.
  const routes: Middleware = (req, res, _next, ctx) => {
    if (ctx.path !== '/mcp') return sendError(res, ctx.id, 404, 'not found');
    if (req.method !== 'POST') return sendError(res, ctx.id, 405, 'use POST', { Allow: 'POST' });
    readJsonBody(req, res, ctx.id, serve.body_limit_bytes, (body) => answerMcp(req, res, ctx, body));
  };

  const answerMcp = (req: IncomingMessage, res: ServerResponse, ctx: RequestContext, body: Buffer): void => {
    const token = ctx.token!;
    // A client that disconnects before its answer cancels the request (streamable-http §Cancellation).
    // The signal is made only when a tool asks for one.
    const signal = (): AbortSignal => {
      const aborted = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) aborted.abort();
      });
      return aborted.signal;
    };
    const send = (r: McpReply): void => {
      ctx.mcpMethod = r.method;
      ctx.mcpRead = r.read === true;
      if (res.destroyed) return;
      if (r.body === null) sendEmpty(res, ctx.id, r.status);
      else sendReply(res, ctx.id, r.status, r.body);
    };
    const reply = mcp.handle({
      body,
      rawHeaders: req.rawHeaders,
      principal: { kind: 'token', name: token.name, keys: token.keys },
      signal,
    });
    if (reply instanceof Promise) {
      reply.then(send, (e: unknown) => onError(e, req, res, ctx));
    } else send(reply);
  };

  const onError = (e: unknown, _req: IncomingMessage, res: ServerResponse, ctx: RequestContext): void => {
    logger.error({ err: (e as Error)?.message ?? String(e), path: ctx.path }, 'request failed');
    if (!res.headersSent) sendError(res, ctx.id, 500, 'internal error');
    else res.destroy();
  };

  // When a response closes: the in-flight place, the metrics counter, the access line; one listener for all three.
  const onClose = (req: IncomingMessage, res: ServerResponse, ctx: RequestContext): void => {
    if (ctx.inFlight) {
      ctx.inFlight = false;
      state.inFlight--;
    }
    ref.current?.request(ctx.mcpMethod ?? routeLabel(ctx.path), res.statusCode);
    accessLine?.(req, res, ctx);
  };

  const stack: Middleware[] = [requestIdMiddleware, hostOrigin, probes, auth, limiter, inFlightCap, routes];
  return { handler: compose(stack, onError, onClose), state, mcp };
}

function routeLabel(path: string): string {
  return path === '/mcp' || path === '/health' || path === '/ready' ? path : '/other';
}

/** The headers a connect-style header middleware (helmet) sets, collected once from a stand-in response. */
function captureHeaders(mw: (req: unknown, res: unknown, next: (e?: unknown) => void) => void): [string, string][] {
  const headers = new Map<string, string>();
  const res = {
    setHeader: (k: string, v: unknown) => void headers.set(k, String(v)),
    removeHeader: (k: string) => void headers.delete(k),
    getHeader: (k: string) => headers.get(k),
  };
  let ran = false;
  mw({ method: 'GET', url: '/', headers: {} }, res, () => {
    ran = true;
  });
  if (!ran) throw new Error('the security-header middleware did not finish synchronously');
  return [...headers];
}
