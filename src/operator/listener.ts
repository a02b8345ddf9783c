/**
 * Starts the operator console on `serve.operator.listen`, with the socket limits of the service's own listener. The
 * console's origin depends on the port actually bound (a configured port 0 picks one), so the app is made once the
 * socket is open; nothing is answered before.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import type { NotifyHook, OperatorConfig, SignerConfig } from '../config/types';
import { boundAddress, listen } from '../http/server';
import type { ApprovalRecord, Ledger } from '../ledger/types';
import type { Refusal } from '../signer/refusals';
import type { KeyView } from '../signer/types';
import type { TreasuryStatus } from '../treasury/status';
import { SignerError } from '../util/errors';
import { createOperatorApp } from './app';
import { consoleOrigin, type ConsoleOrigin } from './origin';
import type { ConsoleHalts } from './routes';

export interface OperatorListener {
  server: http.Server;
  origin: ConsoleOrigin;
  address: string;
}

export async function startOperatorListener(deps: {
  config: SignerConfig;
  logger: Logger;
  ledger: () => Promise<Ledger>;
  keys: () => Promise<KeyView[]>;
  /** What the policy in force now would refuse of a pending approval (the engine's policyNow). */
  policyNow: (approval: ApprovalRecord) => Promise<Refusal | null>;
  /** The treasury keys' allowances on chain and their plans (the engine's treasuryShow). */
  treasuries?: () => Promise<TreasuryStatus[]>;
  halts: ConsoleHalts;
  /** The operators now: a reload may add, remove or change them, and a removed one's session ends at once. */
  operators: () => readonly OperatorConfig[];
  /** The webhooks now (a reload may change them). */
  hooks: () => readonly NotifyHook[];
}): Promise<OperatorListener> {
  const op = deps.config.serve.operator;
  if (!op) throw new SignerError('internal', 'the operator console is off (serve.operator.listen is null)');
  let app: http.RequestListener | null = null;
  const server = await listen(
    (req, res) => {
      if (app) app(req, res);
      else res.writeHead(503).end();
    },
    deps.config,
    op.listen.host,
    op.listen.port,
  );
  const address = boundAddress(server);
  const origin = consoleOrigin(op, Number(address.slice(address.lastIndexOf(':') + 1)));
  app = createOperatorApp({
    listener: op,
    allowedHosts: deps.config.serve.allowed_hosts,
    origin,
    operators: deps.operators,
    logger: deps.logger,
    ledger: deps.ledger,
    keys: deps.keys,
    policyNow: deps.policyNow,
    ...(deps.treasuries === undefined ? {} : { treasuries: deps.treasuries }),
    halts: deps.halts,
    hooks: deps.hooks,
  });
  return { server, origin, address };
}
