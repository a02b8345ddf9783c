/**
 * The listener and the drain. A sign may run for minutes (an operator's approval, then up to 150 s of
 * confirmation), so the request timeout is sized from the config's timings rather than Node's 5-minute default;
 * headers still have to arrive promptly. On SIGTERM the server stops taking requests and waits for running ones.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SignerConfig } from '../config/types';
import type { AppState, SignerApp } from './app';

export interface ServerTimeouts {
  requestTimeout: number;
  headersTimeout: number;
  keepAliveTimeout: number;
}

/** Long enough for the slowest sign the config allows, and never below 10 minutes. */
export function serverTimeouts(config: SignerConfig): ServerTimeouts {
  const t = config.timings;
  const slowestSign = t.approval_timeout_ms + t.confirm_deadline_ms + 6 * t.rpc_timeout_ms + 60_000;
  return { requestTimeout: Math.max(600_000, slowestSign), headersTimeout: 66_000, keepAliveTimeout: 65_000 };
}

export async function listen(
  signerApp: SignerApp,
  config: SignerConfig,
  host: string,
  port: number,
): Promise<http.Server> {
  const t = serverTimeouts(config);
  const server = http.createServer(
    { requestTimeout: t.requestTimeout, headersTimeout: t.headersTimeout, keepAliveTimeout: t.keepAliveTimeout },
    signerApp.handler,
  );
  server.timeout = 0; // no socket inactivity timeout while a sign waits on the chain
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  return server;
}

export function boundAddress(server: http.Server): string {
  const a = server.address() as AddressInfo;
  return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

export interface DrainOptions {
  server: http.Server;
  state: AppState;
  /** Signs the engine is running (they may outlive their HTTP request when a client disconnects). */
  engineInFlight?: () => number;
  drainMs: number;
  pollMs?: number;
}

/**
 * Stops accepting connections, answers any new request on a kept-alive connection 503 (Connection: close), and
 * waits until nothing runs or `drainMs` passes. Resolves to the number of requests still running.
 */
export async function drain(opts: DrainOptions): Promise<number> {
  const { server, state } = opts;
  state.draining = true;
  server.close();
  server.closeIdleConnections();
  const running = (): number => Math.max(state.inFlight, opts.engineInFlight?.() ?? 0);
  const deadline = Date.now() + opts.drainMs;
  const poll = opts.pollMs ?? 100;
  while (running() > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, Math.min(poll, Math.max(1, deadline - Date.now()))));
    server.closeIdleConnections();
  }
  return running();
}
