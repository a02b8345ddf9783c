/**
 * Logs: pino JSON on stderr through an asynchronous, buffered destination (the event loop never waits on a
 * write; lines go out in 8 KiB batches and at least once a second). Headers and bodies are never logged, and
 * the redaction list still covers the secret-bearing paths in case a caller logs an object carrying them.
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { SignerConfig } from '../config/types';
import type { Middleware, OnClose } from './pipeline';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',

  'partial_signers',
  '*.partial_signers',
  'payload.partial_signers',
  '*.payload.partial_signers',
  'ledger.url',
];

export function createLogger(level: SignerConfig['log_level'], destination?: pino.DestinationStream): Logger {
  const dest = destination ?? pino.destination({ dest: 2, sync: false, minLength: 8192 });
  return pino(
    {
      level,
      base: { service: 'sa-forge-signer' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.epochTime,
    },
    dest,
  );
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const prefix = randomBytes(4).toString('hex');
let counter = 0;

/** A caller's X-Request-Id when it is short and plain, else `<process prefix>-<counter>`. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}-${counter.toString(36)}`;
}

/** The first middleware: gives the request its id (also sent back as X-Request-Id). */
export const requestIdMiddleware: Middleware = (req, _res, next, ctx) => {
  ctx.id = requestId(req);
  next();
};

/**
 * The access log: one line per request when its response closes, with the request id, method, path, status,
 * duration, token name and MCP method; null when `info` is off. pino-http was measured here at ~40 µs of CPU per
 * request even with its lines turned off (it builds child loggers per request, serialising the request eagerly),
 * which alone would cost a third of the throughput target; this writes the same fields through the same pino
 * logger and costs nothing when `info` is off.
 */
export function accessLogWriter(logger: Logger): OnClose | null {
  if (!logger.isLevelEnabled('info')) return null;
  const debug = logger.isLevelEnabled('debug');
  const log = logger.child({}, { redact: [] });
  return function writeAccessLine(req, res, ctx) {
    // Successful reads that change nothing (discover, the lists, a resource, key_show) are what a busy client
    // repeats most; metrics count them, and they are logged at `debug`. Every check, sign and halt, every refusal
    // and every error is logged at `info` or above.
    const quiet = ctx.mcpRead && res.statusCode < 400 && res.writableFinished;
    if (quiet && !debug) return;
    const line = {
      reqId: ctx.id,
      method: req.method,
      path: ctx.path,
      status: res.statusCode,
      ms: Math.round((performance.now() - ctx.started) * 10) / 10,
      token_name: ctx.token?.name,
      mcp: ctx.mcpMethod,
    };
    if (res.statusCode >= 500 || !res.writableFinished)
      log.warn(line, res.writableFinished ? 'request failed' : 'client went away');
    else if (quiet) log.debug(line, 'request');
    else log.info(line, 'request');
  };
}

/** Flushes the asynchronous log buffer at least this often, so a quiet service's lines are not held back. */
export function flushPeriodically(logger: Logger, everyMs = 1000): NodeJS.Timeout {
  const t = setInterval(() => logger.flush(), everyMs);
  t.unref();
  return t;
}

/** Writes out whatever the asynchronous destination still holds (before process.exit). */
export function flushLogSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    { flushSync?: () => void } | undefined;
  try {
    stream?.flushSync?.();
  } catch {
    // the descriptor may be gone already: nothing more can be written
  }
}
