/**
 * The HTTP application, an Express 5 app: every middleware in the one order that matters, here and nowhere else.
 *
 *   access log (pino-http: request id, one line per request) and request metrics
 *   → security headers (helmet)
 *   → Host/Origin guard (403)
 *   → probes: GET /health, GET /ready (no token)
 *   → bearer auth (401, before the body is read: a token, or a credential's signature chain; 429 past the
 *     failed credentials an address may present in a minute)
 *   → rate limit per token (express-rate-limit, 429)
 *   → /mcp Router: POST reads the body in time (408) as JSON ≤ limit (413/415), judges a credential's checks
 *     against it (401 credential_refused), then the in-flight cap (503:
 *     places overall and per token; halt and the lists need none) and the JSON-RPC service; GET/DELETE 405
 *   → 404 → the one error handler.
 *
 * The in-flight cap counts requests whose body has arrived, so it sits behind the body parser, inside the Router:
 * a client sending its body slowly never holds a place a halt needs (docs/running.md, "Sockets"). Protocol rules
 * live in pure modules (host-origin.ts, src/mcp/*); each middleware is a factory in ./middleware.
 */
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { CredentialsConfig, SignerConfig, TokenConfig } from '../config/types';
import { credentialGate } from '../credentials/gate';
import { credentialFailureLimit } from './middleware/credential-failure-limit';
import { TokenVerifier } from './bearer-tokens';
import { McpService } from '../mcp/service';
import type { SignerEngine } from '../signer/types';
import './locals';
import type { LedgerRevoked } from '../credentials/ledger-revoked';
import { mcpRouter } from './mcp-router';
import type { Metrics } from './metrics';
import { accessLog } from './middleware/access-log';
import { bearerAuth } from './middleware/bearer-auth';
import { errorHandler } from './middleware/error-handler';
import { hostOrigin } from './middleware/host-origin';
import { probes } from './middleware/probes';
import { requestMetrics } from './middleware/request-metrics';
import { tokenRateLimit } from './middleware/token-rate-limit';
import { sendError } from './send';
import type { ServiceState } from './service-state';

export interface AppDeps {
  config: SignerConfig;
  /** The bearer tokens now (a reload may replace them); the config's when absent. */
  tokens?: () => readonly TokenConfig[];
  /** The credentials' issued roots and revoked ids now (a reload may replace them); the config's when absent. */
  credentials?: () => CredentialsConfig | null;
  /** The credential blocks operators revoked in the ledger (refused besides the config's); none when absent. */
  ledgerRevoked?: LedgerRevoked;
  version: string;
  logger: Logger;
  /** Resolves once the engine is open (tool calls wait for it). */
  engine: () => Promise<SignerEngine>;
  /** The engine if it is open already (readiness never waits). */
  engineIfOpen: () => SignerEngine | null;
  /** Shared with the drain: requests in flight, and whether the process is stopping. */
  state: ServiceState;
  /** The metrics once loaded (serve.ts loads prom-client after the listener is up), or null. */
  metrics?: () => Metrics | null;
}

export function createApp(deps: AppDeps): Express {
  const { config, logger, state } = deps;
  const serve = config.serve;
  const metrics = deps.metrics ?? (() => null);
  const verifier = new TokenVerifier(deps.tokens ?? serve.tokens);
  const credentials = serve.credentials
    ? {
        gate: credentialGate(serve.credentials, deps.credentials, deps.ledgerRevoked ?? null),
        failures: credentialFailureLimit(serve.rate_limit_per_minute),
      }
    : null;
  const mcp = new McpService({
    version: deps.version,
    paramHeaders: serve.param_headers,
    engine: deps.engine,
    log: logger,
    observer: { toolResult: (...a) => metrics()?.toolResult(...a) },
  });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(accessLog(logger));
  app.use(requestMetrics(metrics));
  app.use(helmet());
  app.use(hostOrigin(serve.allowed_hosts));
  app.use(probes({ engineIfOpen: deps.engineIfOpen, state, verifier, logger }));
  app.use(bearerAuth(verifier, credentials));
  app.use(tokenRateLimit(serve.rate_limit_per_minute));
  app.use(
    '/mcp',
    mcpRouter({
      mcp,
      state,
      bodyLimitBytes: serve.body_limit_bytes,
      bodyTimeoutMs: serve.body_timeout_ms,
      inFlight: { total: serve.max_in_flight, perToken: serve.max_in_flight_per_token },
    }),
  );
  app.use((_req, res) => sendError(res, 404, 'not found'));
  app.use(errorHandler({ logger, bodyLimit: serve.body_limit_bytes }));
  return app;
}
