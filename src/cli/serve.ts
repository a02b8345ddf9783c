#!/usr/bin/env node
/**
 * sa-forge-signer-serve: the MCP service. `--config FILE` (or SIGNER_CONFIG) for a deployment; `--local` for the
 * embedded default (a demo key, a token in var/local/token, the in-process chain). The listener opens before
 * the engine (tools wait for it), so the service answers discovery and lists within moments of starting; the
 * engine's chain and ledger modules, and litesvm for --local only, are loaded when needed.
 */
import path from 'node:path';
import type http from 'node:http';
import { loadConfig } from '../config/load';
import type { SignerConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import type { SignerEngine } from '../signer/types';
import { VERSION } from '../util/version';
import { errorMessage } from '../util/errors';
import { endRemovedOperatorsLogins } from '../operator/removed-operators';
import { parseArgs, option } from './args';
import { limitOldGenerationGrowth } from './heap';
import { createApp } from '../http/app';
import { createLogger, flushLog } from '../http/logging';
import type { Metrics } from '../http/metrics';
import { boundAddress, drain, listen } from '../http/server';
import { createServiceState } from '../http/service-state';
import type { ReloadResult } from '../signer/reload';
import type { Policy } from '../signer/policy';
import type { LocalFiles } from './local-default';
import { listenErrorMessage, type ListenerName } from './listen-error';
import { takeRequest, writeAnswer } from './reload-files';
import { acquireServiceLock } from './service-lock';
import { readHookSecrets } from '../notify/secrets';
import { NOTIFY_DELIVERY_DEFAULTS } from '../config/types';
import type { Deliverer } from '../notify/deliverer';

/** How long the fresh listener serves alone before the remaining modules load (see main). */
const START_GRACE_MS = 25;

const HELP = `sa-forge-signer-serve ${VERSION}: the MCP service of sa-forge-signer (MCP 2026-07-28, POST /mcp)

Usage:
  sa-forge-signer-serve --config FILE     serve with this config (YAML or JSON; or set SIGNER_CONFIG)
  sa-forge-signer-serve --local           the embedded default: local chain, SQLite, a demo key; files in var/local
  sa-forge-signer-serve --help | --version

Options:
  --strict             refuse to start when a key file is missing, too open, or not the configured pubkey
                       (without it such a key is logged at start and /ready stays false)

Environment:
  SIGNER_CONFIG        config file when --config is not given
  SIGNER_LISTEN        address to serve on (host:port), overriding serve.listen
  SIGNER_VAR_DIR       folder of the embedded default (default ./var/local)
  SIGNER_…             every scalar config key (see config/example.yaml)

Endpoints: POST /mcp (bearer token), GET /health, GET /ready; Prometheus /metrics on serve.metrics; the operator
console (passkeys, approvals, halts) on serve.operator.listen.
SIGHUP (or \`sa-forge-signer reload\`) reads the config again and applies its keys in place, or changes nothing and
says why. One service per state directory: a second one on the same state_dir refuses to start, naming the first.
SIGTERM/SIGINT drain running signs for up to serve.drain_ms (220 s) before exiting; a second signal exits at
once (a sign it cuts short is recorded in the ledger and resolved on the next start).
Logs: JSON lines on stderr; SIGNER_LOG_PRETTY=1 (or a terminal) for readable ones, SIGNER_LOG_PRETTY=0 for JSON.
`;

const err = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const args = parseArgs(argv, ['help', 'version', 'local', 'strict']);
  if (args.options.get('help') === true) return void process.stdout.write(HELP);
  if (args.options.get('version') === true) return void process.stdout.write(`${VERSION}\n`);

  let config: SignerConfig;
  let localMod: typeof import('./local-default') | null = null;
  let local: LocalFiles | null = null;
  if (args.options.get('local') === true) {
    // Loaded only here: the embedded chain needs litesvm, which the production image does not have.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- litesvm is loaded for --local only
    localMod = require('./local-default') as typeof import('./local-default');
    const varDir = path.resolve(env.SIGNER_VAR_DIR ?? path.join(process.cwd(), 'var', 'local'));
    local = localMod.loadLocalDefault(varDir, env);
    config = local.config;
  } else {
    const file = option(args, 'config') ?? env.SIGNER_CONFIG;
    if (!file)
      throw new Error('no config: pass --config FILE, set SIGNER_CONFIG, or use --local for the embedded default');
    config = loadConfig({ file, env, forServe: true });
  }

  // Each webhook's signing secret, read now: a hook that could not sign refuses the start, before anything opens.
  // A reload that changes the hooks reads their secrets again before it takes over.
  let hookSigners = readHookSecrets(config.notify?.hooks ?? []);

  // One service per state directory, decided before anything is opened, moved or written (cli/service-lock.ts).
  const lock = acquireServiceLock(config.state_dir, { listen: null, config: config.source, policy_hash: null });
  // The engine opens in the background once the listener answers (below). A reload asked before then has nothing
  // to replace yet: it waits for the engine and is then applied to the policy the engine opened with, as one asked a
  // moment later would be (an engine that cannot open ends the process). The handler is set now because Node's
  // default for SIGHUP ends the process.
  let startOpening!: (engine: Promise<SignerEngine>) => void;
  const opening = new Promise<SignerEngine>((resolve) => (startOpening = resolve));
  let reloadNow: () => Promise<ReloadResult> = () => opening.then(() => reloadNow());
  process.on('SIGHUP', () => {
    void reloadOnce(lock.stateDir, () => reloadNow());
  });
  let localChain: { close(): Promise<void> } | null = null;
  let server: http.Server;
  let metricsServer: http.Server | null = null;
  let operatorServer: http.Server | null = null;
  // The operator console reads the ledger the engine opens (one handle per process).
  let ledgerOpened!: (ledger: Ledger) => void;
  const ledgerOpening = new Promise<Ledger>((resolve) => (ledgerOpened = resolve));
  const logger = createLogger(config.log_level);
  let engine: SignerEngine | null = null;
  let openedLedger: Ledger | null = null;
  let deliverer: Deliverer | null = null;
  // prom-client loads after the listener is up (it costs tens of milliseconds of start-up); until then nothing is
  // counted.
  let metrics: Metrics | null = null;
  const rpcObserver = (m: string, ms: number, ok: boolean): void => metrics?.rpc(m, ms, ok);
  // The running policy, once the engine has opened it: what a reload replaces.
  let livePolicy: (() => Policy) | null = null;
  const state = createServiceState();
  // Tool calls wait on `opening` from the first request on, including those that arrive before the engine starts
  // to open (below, after the listener's grace period).
  const app = createApp({
    config,
    // The policy's tokens once the engine has opened it (a reload may replace them), the config's until then.
    tokens: () => livePolicy?.().tokens ?? config.serve.tokens,
    credentials: () => livePolicy?.().credentials ?? config.serve.credentials ?? null,
    version: VERSION,
    logger,
    engine: () => opening,
    engineIfOpen: () => engine,
    state,
    metrics: () => metrics,
  });
  try {
    if (localMod) localChain = await localMod.startLocalChain(config);
    server = await listenNamed(app, config, 'mcp', config.serve.listen);
  } catch (e) {
    // A start that fails leaves everything where it was: no ledger moved, the state directory free again.
    await localChain?.close();
    lock.release();
    throw e;
  }
  const address = boundAddress(server);
  lock.update({ listen: address });
  err(`sa-forge-signer ${VERSION} serving on ${address}`);
  err(`MCP endpoint: http://${address}/mcp`);
  // Answer whoever was waiting for the port (a probe, an agent) before loading the rest: prom-client and the
  // engine's chain and ledger modules take tens of milliseconds of synchronous loading, which would hold them.
  await new Promise((r) => setTimeout(r, START_GRACE_MS));
  if (config.serve.metrics) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
    const { Metrics } = require('../http/metrics') as typeof import('../http/metrics');
    const loaded = new Metrics({
      haltedKeys: async () =>
        engine
          ? (await engine.keyShow({ principal: { kind: 'operator' } })).filter((k) => k.halted !== null).length
          : 0,
      inFlight: () => state.inFlight,
      outboxPending: async () => (openedLedger ? (await openedLedger.notificationCounts()).pending : 0),
    });
    const at = config.serve.metrics;
    try {
      metricsServer = await loaded.listen(at.host, at.port, config.serve.allowed_hosts);
    } catch (e) {
      server.close();
      await localChain?.close();
      lock.release();
      throw new Error(listenErrorMessage(e, 'metrics', `${at.host}:${String(at.port)}`) ?? errorMessage(e), {
        cause: e,
      });
    }
    metrics = loaded;
    err(`metrics: http://${boundAddress(metricsServer)}/metrics`);
  }
  if (config.serve.operator) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
    const { startOperatorListener } = require('../operator/listener') as typeof import('../operator/listener');
    const at = config.serve.operator.listen;
    try {
      const opened = await startOperatorListener({
        config,
        logger,
        ledger: () => ledgerOpening,
        keys: async () => (await opening).keyShow({ principal: { kind: 'operator' } }),
        policyNow: async (approval) => (await opening).policyNow(approval),
        treasuries: async () => (await opening).treasuryShow(),
        // The policy's operators and hooks once the engine has opened (a reload may change them), the config's until
        // then.
        operators: () => livePolicy?.().operators ?? config.operators ?? [],
        hooks: () => livePolicy?.().hooks ?? config.notify?.hooks ?? [],
        halts: {
          halt: async (key, reason, name) =>
            (await opening).halt({ key, reason, principal: { kind: 'operator', name } }),
          resume: async (key, name) => (await opening).resume(key, `operator:${name}`),
        },
      });
      operatorServer = opened.server;
      err(
        `operator console: ${opened.origin.origin}/ (listening on ${opened.address}; passkeys: sa-forge-signer operator enroll NAME)`,
      );
    } catch (e) {
      server.close();
      metricsServer?.close();
      await localChain?.close();
      lock.release();
      throw new Error(listenErrorMessage(e, 'operator', `${at.host}:${String(at.port)}`) ?? errorMessage(e), {
        cause: e,
      });
    }
  }
  // Every listener is open and the state directory is ours: only now may the embedded default start a fresh ledger.
  if (localMod) {
    try {
      await localMod.freshLedger(config, err);
    } catch (e) {
      // Nothing was moved (or the halts are held in the state directory): the next start tries again.
      server.close();
      metricsServer?.close();
      operatorServer?.close();
      await localChain?.close();
      lock.release();
      throw e;
    }
  }
  // The engine opens in the background, after the listener: tool calls wait for it, /ready says "starting".
  startOpening(
    (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { openEngine } = require('../signer') as typeof import('../signer');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { chainClientFor } = require('../rpc/for-cluster') as typeof import('../rpc/for-cluster');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { timedChain } = require('../http/timed-chain') as typeof import('../http/timed-chain');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { openLedger } = require('../ledger/open') as typeof import('../ledger/open');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const policies = require('../signer/policy') as typeof import('../signer/policy');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { reloadPolicy } = require('../signer/reload') as typeof import('../signer/reload');
      const rpc = chainClientFor(config.cluster, config.timings);
      const chain = config.serve.metrics ? timedChain(rpc, rpcObserver) : rpc;
      const holder = policies.createPolicyHolder(policies.policyFor(config));
      livePolicy = () => holder.current();
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { createOutbox } = require('../notify/outbox') as typeof import('../notify/outbox');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { startDeliverer } = require('../notify/deliverer') as typeof import('../notify/deliverer');
      let replicationWarning: string | null = null;
      const ledger = await openLedger(config.ledger, {
        postgres: {
          // Each primary found (at start, after a failover) is logged; a replication warning once, when it changes.
          onPrimary: (primary, timeline, warning) => {
            logger.info({ ledger_primary: primary.label, timeline }, 'ledger: writing to this PostgreSQL server');
            if (warning !== null && warning !== replicationWarning) logger.warn({ ledger_warning: warning }, warning);
            replicationWarning = warning;
          },
        },
      });
      ledgerOpened(ledger);
      // Events go to the outbox in the ledger; this process's deliverer is woken at once to send them.
      const notifier = createOutbox({
        ledger,
        hooks: () => holder.current().hooks,
        log: logger,
        onEnqueued: () => deliverer?.kick(),
      });
      const opened = await openEngine(config, {
        notifier,
        logger,
        chain,
        ledger,
        policy: () => holder.current(),
        checkMints: true,
        strictKeys: args.options.get('strict') === true,
        // Alerts and watcher costs reach the metrics when they are served.
        observer: {
          alert: (a) => metrics?.alert(a),
          watchPoll: (cost) => metrics?.watchPoll(cost),
        },
      });
      lock.update({ policy_hash: holder.current().hash });
      openedLedger = ledger;
      // One deliverer per process, once there is a hook; it picks up what an earlier run (or another process) left
      // undelivered. A reload that adds the first hook starts it.
      const startDelivering = (): void => {
        if (deliverer !== null || holder.current().hooks.length === 0) return;
        deliverer = startDeliverer({
          ledger,
          delivery: config.notify?.delivery ?? NOTIFY_DELIVERY_DEFAULTS,
          hooks: () => ({ hooks: holder.current().hooks, signers: hookSigners }),
          log: logger,
          observer: {
            delivered: (h) => metrics?.delivered(h),
            retrying: (h) => metrics?.retrying(h),
            failed: (h) => metrics?.failed(h),
          },
        });
      };
      startDelivering();
      const file = config.source;
      reloadNow = () => {
        // The logins of operators the reload removes end before its answer (the takeover starts it).
        let loginsEnded = Promise.resolve();
        return reloadPolicy({
          load: () => loadConfig({ file: file ?? undefined, env, forServe: true }),
          started: config,
          holder,
          chain,
          ledger,
          log: logger,
          prepare: (next) => {
            // Changed hooks are signed with secrets read now: one that cannot be read refuses the reload.
            const signers = readHookSecrets(next.hooks);
            const operatorsBefore = holder.current().operators;
            return () => {
              hookSigners = signers;
              startDelivering();
              deliverer?.kick();
              loginsEnded = endRemovedOperatorsLogins(ledger, operatorsBefore, next.operators, logger);
            };
          },
        }).then(async (result) => {
          await loginsEnded;
          lock.update({ policy_hash: holder.current().hash });
          return result;
        });
      };
      engine = opened;
      return opened;
    })(),
  );
  opening.catch((e: unknown) => {
    err(`error: cannot open the signer engine: ${errorMessage(e)}`);
    lock.release();
    process.exit(1);
  });

  if (local && localMod) {
    const demo = localMod.runDemo;
    for (const line of localMod.localBanner(local, address)) err(line);
    if (local.firstRun) {
      void opening.then((e) => demo(e, config)).catch((e: unknown) => err(`demo: ${errorMessage(e)}`));
    }
  }

  // The first SIGTERM/SIGINT drains: no new requests, running signs may finish for serve.drain_ms. A second one
  // (an operator pressing Ctrl-C again rather than wait out an approval window) exits at once: a sign it cuts
  // short has its intent in the ledger already, and the next start resolves it.
  let stopping = false;
  const exitNow = (signal: NodeJS.Signals): void => {
    err(`signal ${signal} again: exiting now; running signs are resolved from the ledger on the next start`);
    lock.release();
    process.exit(130);
  };
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      exitNow(signal);
      return;
    }
    stopping = true;
    err(`signal ${signal}: no new requests; draining (send it again to exit at once)`);
    const remaining = await drain({
      server,
      state,
      engineInFlight: () => engine?.inFlight() ?? 0,
      drainMs: config.serve.drain_ms,
    });
    if (remaining > 0)
      err(`stopping with ${remaining} request(s) still running; their callers must treat a sign as unknown`);
    metricsServer?.close();
    operatorServer?.close();
    // Attempts still running are cut off and left due in the outbox (the next start sends them) before the ledger closes.
    await deliverer?.close();
    await Promise.allSettled([engine?.close(), localChain?.close()]);
    await flushLog(logger);
    lock.release();
    err('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', (s) => void stop(s));
  process.on('SIGINT', (s) => void stop(s));
}

/** Opens a listener, or fails with the address and the setting that moves it. */
async function listenNamed(
  app: http.RequestListener,
  config: SignerConfig,
  which: ListenerName,
  at: { host: string; port: number },
): Promise<http.Server> {
  try {
    return await listen(app, config, at.host, at.port);
  } catch (e) {
    throw new Error(listenErrorMessage(e, which, `${at.host}:${String(at.port)}`) ?? errorMessage(e), { cause: e });
  }
}

/** Reloads run one at a time; each answers the request the CLI left (if any) in the result file and the log. */
let reloading: Promise<void> = Promise.resolve();
function reloadOnce(stateDir: string, run: () => Promise<ReloadResult>): Promise<void> {
  reloading = reloading.then(async () => {
    let request: string | null = null;
    try {
      request = takeRequest(stateDir);
    } catch (e) {
      err(`reload: cannot read the request in ${stateDir}: ${errorMessage(e)}`);
    }
    let result: ReloadResult;
    try {
      result = await run();
    } catch (e) {
      result = {
        status: 'refused',
        message: `reload refused, nothing changed: ${errorMessage(e)}`,
        old_hash: '',
        new_hash: null,
        changes: [],
      };
    }
    // The answer file first: once the log line is out, the answer can be read.
    try {
      writeAnswer(stateDir, request, result);
    } catch (e) {
      // The reload happened (or not) all the same; only the CLI waiting for the answer misses it.
      err(`reload: cannot write the answer to ${stateDir}: ${errorMessage(e)}`);
    }
    err(`reload: ${result.message}`);
  });
  return reloading;
}

if (require.main === module) {
  limitOldGenerationGrowth();
  main(process.argv.slice(2)).catch((e: unknown) => {
    err(`error: ${errorMessage(e)}`);
    process.exit(1);
  });
}
