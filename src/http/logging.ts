/**
 * Logs: pino JSON on stderr through an asynchronous destination (the event loop never waits on a write),
 * and pino-http request logs with a minimal request serializer: method, path, request id, token name.
 * Headers and bodies are never serialised, and the redaction list still covers the secret-bearing paths
 * in case a future serializer adds them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import type { SignerConfig } from '../config/types';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  'partial_signers',
  '*.partial_signers',
  'payload.partial_signers',
  '*.payload.partial_signers',
  'ledger.url',
];

export function createLogger(level: SignerConfig['log_level'], destination?: pino.DestinationStream): Logger {
  const dest = destination ?? pino.destination({ dest: 2, sync: false, minLength: 4096 });
  return pino({ level, base: { service: 'sa-forge-signer' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime }, dest);
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

export interface RequestLogContext {
  tokenName?: string;
  mcpMethod?: string | null;
}

/** Where the pipeline leaves what the access log line should carry. */
export function logContext(res: ServerResponse): RequestLogContext {
  const r = res as ServerResponse & { signerLog?: RequestLogContext };
  return (r.signerLog ??= {});
}

export function httpLogger(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const id = requestId(req);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    quietReqLogger: true,
    quietResLogger: true,
    wrapSerializers: false,
    serializers: {
      req: (req: IncomingMessage & { id?: unknown }) => ({ method: req.method, path: (req.url ?? '').split('?')[0] }),
      res: (res: ServerResponse) => ({ status: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, res, val: Record<string, unknown>) => {
      const ctx = logContext(res);
      return { ...val, method: req.method, path: (req.url ?? '').split('?')[0], token: ctx.tokenName, mcp: ctx.mcpMethod };
    },
    customSuccessMessage: () => 'request',
  });
}
