/**
 * The operator console's HTTP application, an Express 5 app on a listener of its own (`serve.operator`), never the
 * agents' /mcp. Every middleware in the one order that matters:
 *
 *   access log (pino-http; cookies redacted)
 *   → security headers (helmet, a strict Content-Security-Policy: scripts, styles and fetches from this origin only)
 *   → Host/Origin guard (403; the MCP listener's rules, with the console's own origin added)
 *   → a POST only from the console's exact origin (403)
 *   → no bearer tokens (401: an agent's token opens nothing here)
 *   → /assets: our script and style, @simplewebauthn/browser's ES modules
 *   → cookies, the sealed session (iron-session), a JSON body ≤ 64 KiB
 *   → CSRF check on every POST (csrf-csrf, 403)
 *   → pages (/, /login, /enroll) and /api (the passkey ceremonies, decisions, halts; at most 300 a minute, 429)
 *   → 404 → the one error handler.
 */
import cookieParser from 'cookie-parser';
import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Logger } from 'pino';
import type { NotifyHook, OperatorConfig, OperatorListenerConfig } from '../config/types';
import { accessLog } from '../http/middleware/access-log';
import { hostOrigin } from '../http/middleware/host-origin';
import { sendError } from '../http/send';
import type { ApprovalRecord, Ledger } from '../ledger/types';
import type { Refusal } from '../signer/refusals';
import { approvalDecided } from '../notify/events';
import { createOutbox, type Notifier } from '../notify/outbox';
import type { KeyView } from '../signer/types';
import type { TreasuryStatus } from '../treasury/status';
import { assetsRouter } from './assets';
import { consoleCsrf } from './csrf';
import { ceremonyRateLimit, PENDING_POLLS_PER_MINUTE } from './middleware/ceremony-rate-limit';
import { consoleErrorHandler } from './middleware/error-handler';
import { refuseBearer } from './middleware/refuse-bearer';
import { sameOrigin } from './middleware/same-origin';
import type { ConsoleOrigin } from './origin';
import { apiRoutes, pageRoutes, pendingRoute, type ConsoleHalts, type RouteDeps } from './routes';
import { consoleSession } from './session';
import { loadSessionSecret } from './session-secret';

export interface OperatorAppDeps {
  listener: OperatorListenerConfig;
  /** `serve.allowed_hosts`: the console's origin is allowed besides them. */
  allowedHosts: readonly string[];
  origin: ConsoleOrigin;
  operators: () => readonly OperatorConfig[];
  logger: Logger;
  /** Resolves once the ledger is open. */
  ledger: () => Promise<Ledger>;
  /** Every key as the engine shows it (caps, spent, remaining, halt). */
  keys: () => Promise<KeyView[]>;
  /** What the policy in force now would refuse of a pending approval (the engine's policyNow). */
  policyNow: (approval: ApprovalRecord) => Promise<Refusal | null>;
  /** The treasury keys' allowances on chain and their plans (the engine's treasuryShow); absent: none shown. */
  treasuries?: () => Promise<TreasuryStatus[]>;
  /** Halts and resumes through the engine. */
  halts: ConsoleHalts;
  /** Unix ms; tests move it. */
  nowMs?: () => number;
  /** The webhooks now (a reload may change them): told of each decision made here. */
  hooks: () => readonly NotifyHook[];
}

/** helmet with a CSP that lets the page load nothing but its own files; no upgrade on plain-http localhost. */
function securityHeaders(secure: boolean) {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        ...(secure ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    strictTransportSecurity: secure,
  });
}

export function createOperatorApp(deps: OperatorAppDeps): Express {
  const nowMs = deps.nowMs ?? Date.now;
  let secret: string | null = null;
  let loading: Promise<string> | null = null;
  const sessionSecret = (): Promise<string> => {
    loading ??= loadSessionSecret(deps.listener.session_secret_file, deps.ledger).then((s) => (secret = s));
    return loading;
  };
  const csrf = consoleCsrf({
    secure: deps.origin.secure,
    // The session middleware has resolved the secret before any CSRF check runs.
    secret: () => secret ?? '',
  });
  // This process's deliverer sends what is written here at its next poll.
  let outbox: Promise<Notifier> | undefined;
  const guard = { ledger: deps.ledger, operators: deps.operators, ttlMs: deps.listener.session_ttl_ms, nowMs };
  const routeDeps: RouteDeps = {
    ledger: deps.ledger,
    operators: deps.operators,
    keys: deps.keys,
    policyNow: deps.policyNow,
    ...(deps.treasuries === undefined ? {} : { treasuries: deps.treasuries }),
    halts: deps.halts,
    csrf,
    nowMs,
    logger: deps.logger,
    ceremonies: async () => ({
      ledger: await deps.ledger(),
      origin: deps.origin,
      operators: deps.operators,
      now: () => Math.floor(nowMs() / 1000),
    }),
    decided: async (record) => {
      outbox ??= deps.ledger().then((ledger) => createOutbox({ ledger, hooks: deps.hooks, log: deps.logger }));
      await (await outbox).emit(approvalDecided(record));
    },
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(accessLog(deps.logger));
  app.use(securityHeaders(deps.origin.secure));
  app.use(hostOrigin([...deps.allowedHosts, deps.origin.authority]));
  app.use(sameOrigin(deps.origin.origin));
  app.use(refuseBearer());
  app.use('/assets', assetsRouter());
  app.use(cookieParser());
  app.use(consoleSession({ secret: sessionSecret, secure: deps.origin.secure, ttlMs: deps.listener.session_ttl_ms }));
  app.use(express.json({ limit: '64kb' }));
  app.use(csrf.doubleCsrfProtection);
  app.use(pageRoutes(routeDeps, guard));
  // Open pages poll this all day: it has a bound of its own, so polling never takes the ceremonies' share.
  app.use('/api/pending', ceremonyRateLimit(PENDING_POLLS_PER_MINUTE), pendingRoute(routeDeps, guard));
  app.use('/api', ceremonyRateLimit(), apiRoutes(routeDeps, guard));
  app.use((_req, res) => sendError(res, 404, 'not found'));
  app.use(consoleErrorHandler(deps.logger));
  return app;
}
