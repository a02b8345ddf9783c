/**
 * The MCP service under abuse, two ways:
 * - in-process: the real app (src/http/app.ts) on the real listener (src/http/server.ts), on a loopback port,
 *   over a test world's engine, with its logs captured and its metrics on their own listener;
 * - as a process: the built `dist/src/cli/serve.js --config FILE`, its stdout and stderr captured.
 * Either way every log line and the metrics text end up as artefacts for the secret scan, and every token is
 * registered as a secret.
 */
import fs from 'node:fs';
import YAML from 'yaml';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { ServeConfig, SignerConfig } from '../../../src/config/types';
import type { Express } from 'express';
import { createApp } from '../../../src/http/app';
import { createLogger } from '../../../src/http/logging';
import { Metrics } from '../../../src/http/metrics';
import { listen } from '../../../src/http/server';
import { createServiceState, type ServiceState } from '../../../src/http/service-state';
import { newToken, tokenSha256 } from '../../../src/http/bearer-tokens';
import type { SignerEngine } from '../../../src/signer/types';
import { BIN, assertBuilt, spawnBin, waitForOutput } from '../../support/cli';
import { tallyClass } from './class-tally';
import { ArtefactBuffer, recordArtefact, recordSecrets } from './record';

export interface IssuedToken {
  name: string;
  token: string;
  keys: string[];
}

/** New bearer tokens, registered as secrets of `suite`; `config` is what serve.tokens lists (sha256 only). */
export function issueTokens(
  suite: string,
  specs: { name: string; keys: string[] }[],
): { tokens: IssuedToken[]; config: ServeConfig['tokens'] } {
  const tokens = specs.map((s) => ({ ...s, token: newToken() }));
  recordSecrets(
    suite,
    tokens.map((t) => ({ label: `token ${t.name}`, value: t.token })),
  );
  return { tokens, config: tokens.map((t) => ({ name: t.name, sha256: tokenSha256(t.token), keys: t.keys })) };
}

export interface InProcessService {
  url: string;
  port: number;
  /** The /metrics listener's port. */
  metricsPort: number;
  app: Express;
  state: ServiceState;
  server: http.Server;
  metrics: Metrics;
  /** The Prometheus text now (also recorded as an artefact). */
  scrapeMetrics(): Promise<string>;
  close(): Promise<void>;
}

/** A pino destination that keeps every line for the secret scan. */
class CapturedLog extends Writable {
  lines = 0;
  constructor(private readonly sink: ArtefactBuffer) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    const text = chunk.toString('utf8');
    this.lines += text.split('\n').filter(Boolean).length;
    this.sink.add('log', text.trimEnd());
    done();
  }
}

export async function serveInProcess(opts: {
  suite: string;
  config: SignerConfig;
  engine: SignerEngine;
  tokens: ServeConfig['tokens'];
  serve?: Partial<ServeConfig>;
  logLevel?: SignerConfig['log_level'];
}): Promise<InProcessService> {
  const config: SignerConfig = { ...opts.config, serve: { ...opts.config.serve, ...opts.serve, tokens: opts.tokens } };
  const sink = new ArtefactBuffer(opts.suite);
  const logger = createLogger(opts.logLevel ?? 'info', new CapturedLog(sink));
  const metrics = new Metrics({ defaultMetrics: false });
  const state = createServiceState();
  const app = createApp({
    config,
    version: 'abuse',
    logger,
    engine: () => Promise.resolve(opts.engine),
    engineIfOpen: () => opts.engine,
    state,
    metrics: () => metrics,
  });
  const server = await listen(app, config, '127.0.0.1', 0);
  const tally = tallyClass(opts.suite, server, config, opts.engine);
  const metricsServer = await metrics.listen('127.0.0.1', 0, config.serve.allowed_hosts);
  const port = (server.address() as AddressInfo).port;
  const metricsUrl = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
  const scrapeMetrics = async (): Promise<string> => {
    const text = await (await fetch(metricsUrl)).text();
    recordArtefact(opts.suite, 'metrics', text);
    return text;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    metricsPort: (metricsServer.address() as AddressInfo).port,
    app,
    state,
    server,
    metrics,
    scrapeMetrics,
    async close() {
      await tally.finish();
      await scrapeMetrics().catch(() => undefined);
      logger.flush();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await new Promise<void>((r) => metricsServer.close(() => r()));
      sink.flush();
    },
  };
}

export interface ServeProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  metricsUrl: string | null;
  /** stdout and stderr so far. */
  output(): string;
  exited: Promise<number | null>;
  kill9(): Promise<void>;
  /** SIGTERM and wait for the drain to finish. */
  stop(): Promise<number | null>;
}

/** Starts the built service on `configFile` and waits until it serves; its output is recorded as artefacts. */
export async function startServe(
  configFile: string,
  suite: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ServeProcess> {
  assertBuilt(BIN.serve);
  const child = spawnBin(BIN.serve, ['--config', configFile], env);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      // The whole output of this process life, for the secret scan (a killed process's last lines included).
      setImmediate(() => recordArtefact(suite, 'log', output));
      resolve(code);
    }),
  );
  // The metrics listener opens just after the MCP one, with its own line: wait for it when one is configured.
  const metricsWanted =
    (YAML.parse(fs.readFileSync(configFile, 'utf8')) as { serve?: { metrics?: unknown } }).serve?.metrics != null;
  const seen = await waitForOutput(
    child,
    metricsWanted ? /metrics: http:\/\/\S+\/metrics\n/ : /MCP endpoint: http:\/\/\S+\/mcp[^\n]*\n/,
  );
  const address = /serving on (\S+)/.exec(seen)![1]!;
  const metrics = /metrics: (http:\/\/\S+\/metrics)/.exec(seen)?.[1] ?? null;
  return {
    child,
    pid: child.pid!,
    url: `http://${address}`,
    metricsUrl: metrics,
    output: () => output,
    exited,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Scrapes a serve process's metrics listener and records the text. */
export async function scrapeMetrics(metricsUrl: string, suite: string): Promise<string> {
  const text = await (await fetch(metricsUrl)).text();
  recordArtefact(suite, 'metrics', text);
  return text;
}
