/**
 * The access log, pino-http: one line per request when its response finishes (or its client goes away), with the
 * request id (also sent back as X-Request-Id), method, path, status, duration in ms, the token's name (never the
 * token), the headers with credentials and Mcp-Param-* redacted, and for MCP the JSON-RPC method and what a tool
 * call did (tool, key, outcome, signature).
 *
 * Levels: an internal error is `error`, another 5xx (busy, draining) or a client gone before its answer `warn`, a successful read that changes nothing
 * (discovery, the lists, a resource, key_show) `debug` — it is what a busy client repeats most, and metrics count
 * it — and everything else, every check, sign, halt and refusal, `info`.
 */
import { randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger, LevelWithSilent } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import { redactHeaders } from '../redact-headers';
import { requestPath } from '../request-path';

const GIVEN_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Request ids: the caller's X-Request-Id when it is short and plain, else `<process prefix>-<counter>`. */
function requestIds(): (req: Request, res: Response) => string {
  const prefix = randomBytes(4).toString('hex');
  let counter = 0;
  return (req, res) => {
    const given = req.headers['x-request-id'];
    let id: string;
    if (typeof given === 'string' && GIVEN_REQUEST_ID.test(given)) id = given;
    else {
      counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
      id = `${prefix}-${counter.toString(36)}`;
    }
    res.setHeader('X-Request-Id', id);
    return id;
  };
}

function levelOf(res: Response, err: Error | undefined): LevelWithSilent {
  if (err !== undefined || res.statusCode === 500) return 'error';
  if (res.statusCode >= 500 || !res.writableFinished) return 'warn';
  if (res.locals.mcp?.read === true && res.statusCode < 400) return 'debug';
  return 'info';
}

function line(req: Request, res: Response, responseTime: unknown): Record<string, unknown> {
  const mcp = res.locals.mcp;
  return {
    reqId: req.id,
    method: req.method,
    path: requestPath(req),
    status: res.statusCode,
    ms: responseTime,
    token: res.locals.token?.name,
    headers: redactHeaders(req.headers),
    ...(mcp !== undefined ? { mcp: { method: mcp.method, ...mcp.tool } } : {}),
  };
}

export function accessLog(logger: Logger): HttpLogger<Request, Response> {
  return pinoHttp<Request, Response>({
    logger,
    genReqId: requestIds(),
    // The line is built here, at the end, from what the request did (the request id included); nothing is
    // serialised per request before that. pino-http makes one child logger per request with the request as its
    // binding: a serializer giving `undefined` leaves that binding empty (pino skips it), so making the child
    // costs nothing and the line does not repeat method and URL (docs/performance.md, "The access log").
    wrapSerializers: false,
    serializers: { req: () => undefined },
    customAttributeKeys: { responseTime: 'ms' },
    customLogLevel: (_req, res, err) => {
      const level = levelOf(res, err);
      // An object for a line that is not written would be built for nothing.
      return level !== 'silent' && logger.isLevelEnabled(level) ? level : 'silent';
    },
    customSuccessObject: (req, res, val: { ms?: unknown }) => line(req, res, val.ms),
    customSuccessMessage: (_req, res) => (res.writableFinished ? 'request' : 'client went away'),
    customErrorObject: (req, res, error, val: { ms?: unknown }) => ({ ...line(req, res, val.ms), err: error.message }),
    customErrorMessage: () => 'request failed',
  });
}
