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
import type { SignerEngine } from '../signer/types';
import { VERSION } from '../util/version';
import { errorMessage } from '../util/errors';
import { parseArgs, option } from './args';
import { limitOldGenerationGrowth } from './heap';
import { createApp } from '../http/app';
import { createLogger, flushLog } from '../http/logging';
import type { Metrics } from '../http/metrics';
import { boundAddress, drain, listen } from '../http/server';
import { createServiceState } from '../http/service-state';

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

Endpoints: POST /mcp (bearer token), GET /health, GET /ready; Prometheus /metrics on serve.metrics.
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
  let local: { tokenFile: string; firstRun: boolean; close(): Promise<void> } | null = null;
  let runDemo: ((engine: SignerEngine, config: SignerConfig) => Promise<void>) | null = null;
  if (args.options.get('local') === true) {
    // Loaded only here: the embedded chain needs litesvm, which the production image does not have.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- litesvm is loaded for --local only
    const mod = require('./local-default') as typeof import('./local-default');
    const varDir = path.resolve(env.SIGNER_VAR_DIR ?? path.join(process.cwd(), 'var', 'local'));
    const prepared = await mod.prepareLocalDefault(varDir, env);
    config = prepared.config;
    local = prepared;
    runDemo = mod.runDemo;
  } else {
    const file = option(args, 'config') ?? env.SIGNER_CONFIG;
    if (!file)
      throw new Error('no config: pass --config FILE, set SIGNER_CONFIG, or use --local for the embedded default');
    config = loadConfig({ file, env, forServe: true });
  }

  const logger = createLogger(config.log_level);
  let engine: SignerEngine | null = null;
  // prom-client loads after the listener is up (it costs tens of milliseconds of start-up); until then nothing is
  // counted.
  let metrics: Metrics | null = null;
  const rpcObserver = (m: string, ms: number, ok: boolean): void => metrics?.rpc(m, ms, ok);
  const state = createServiceState();

  // Tool calls wait on `opening` from the first request on, including those that arrive before the engine starts
  // to open (below, after the listener's grace period).
  let startOpening!: (engine: Promise<SignerEngine>) => void;
  const opening = new Promise<SignerEngine>((resolve) => (startOpening = resolve));
  const app = createApp({
    config,
    version: VERSION,
    logger,
    engine: () => opening,
    engineIfOpen: () => engine,
    state,
    metrics: () => metrics,
  });
  const server = await listen(app, config, config.serve.listen.host, config.serve.listen.port);
  const address = boundAddress(server);
  err(`sa-forge-signer ${VERSION} serving on ${address}`);
  err(`MCP endpoint: http://${address}/mcp`);
  // Answer whoever was waiting for the port (a probe, an agent) before loading the rest: prom-client and the
  // engine's chain and ledger modules take tens of milliseconds of synchronous loading, which would hold them.
  await new Promise((r) => setTimeout(r, START_GRACE_MS));
  let metricsServer: http.Server | null = null;
  if (config.serve.metrics) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
    const { Metrics } = require('../http/metrics') as typeof import('../http/metrics');
    const loaded = new Metrics({
      haltedKeys: async () =>
        engine
          ? (await engine.keyShow({ principal: { kind: 'operator' } })).filter((k) => k.halted !== null).length
          : 0,
      inFlight: () => state.inFlight,
    });
    metricsServer = await loaded.listen(
      config.serve.metrics.host,
      config.serve.metrics.port,
      config.serve.allowed_hosts,
    );
    metrics = loaded;
    err(`metrics: http://${boundAddress(metricsServer)}/metrics`);
  }
  // The engine opens in the background, after the listener: tool calls wait for it, /ready says "starting".
  startOpening(
    (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { openEngine } = require('../signer') as typeof import('../signer');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { chainClientFor } = require('../chain/for-cluster') as typeof import('../chain/for-cluster');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose: the listener answers first
      const { timedChain } = require('../http/timed-chain') as typeof import('../http/timed-chain');
      const rpc = chainClientFor(config.cluster, config.timings);
      const chain = config.serve.metrics ? timedChain(rpc, rpcObserver) : rpc;
      const opened = await openEngine(config, {
        logger,
        chain,
        strictKeys: args.options.get('strict') === true,
        // Alerts and watcher costs reach the metrics when they are served.
        observer: {
          alert: (a) => metrics?.alert(a),
          watchPoll: (cost) => metrics?.watchPoll(cost),
        },
      });
      engine = opened;
      return opened;
    })(),
  );
  opening.catch((e: unknown) => {
    err(`error: cannot open the signer engine: ${errorMessage(e)}`);
    process.exit(1);
  });

  if (local) {
    err(`token: ${local.tokenFile} (0600). Add the service to Claude Code with:`);
    err(
      `  claude mcp add --transport http signer http://${address}/mcp --header "Authorization: Bearer $(cat ${local.tokenFile})"`,
    );
    if (local.firstRun && runDemo) {
      const demo = runDemo;
      void opening.then((e) => demo(e, config)).catch((e: unknown) => err(`demo: ${errorMessage(e)}`));
    }
  }

  // The first SIGTERM/SIGINT drains: no new requests, running signs may finish for serve.drain_ms. A second one
  // (an operator pressing Ctrl-C again rather than wait out an approval window) exits at once: a sign it cuts
  // short has its intent in the ledger already, and the next start resolves it.
  let stopping = false;
  const exitNow = (signal: NodeJS.Signals): void => {
    err(`signal ${signal} again: exiting now; running signs are resolved from the ledger on the next start`);
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
    await Promise.allSettled([engine?.close(), local?.close()]);
    await flushLog(logger);
    err('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', (s) => void stop(s));
  process.on('SIGINT', (s) => void stop(s));
}

if (require.main === module) {
  limitOldGenerationGrowth();
  main(process.argv.slice(2)).catch((e: unknown) => {
    err(`error: ${errorMessage(e)}`);
    process.exit(1);
  });
}
