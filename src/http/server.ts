/**
 * The listener and the drain. Socket limits come from `serve.*` (docs/running.md, "Sockets"): request headers must
 * arrive within `headers_timeout_ms` — which also closes a connection that never sends a request — and a whole
 * request within headers + body timeout; Node checks both every second. An idle kept-alive connection closes after
 * `keep_alive_timeout_ms`, and at most `max_connections` are open. Once a request has arrived, nothing times out
 * its answer: a sign may wait minutes for an operator and the chain. On SIGTERM the server stops taking requests
 * and waits for running ones.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SignerConfig } from '../config/types';
import type { ServiceState } from './service-state';

export interface SocketLimits {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  maxConnections: number;
}

export function socketLimits(serve: SignerConfig['serve']): SocketLimits {
  return {
    headersTimeout: serve.headers_timeout_ms,
    // A backstop for any request whose body no middleware reads (a 401's body is discarded by Node): the body
    // deadline answers /mcp itself, with a JSON error, a moment earlier.
    requestTimeout: serve.headers_timeout_ms + serve.body_timeout_ms + 1000,
    keepAliveTimeout: serve.keep_alive_timeout_ms,
    maxConnections: serve.max_connections,
  };
}

export async function listen(
  app: http.RequestListener,
  config: SignerConfig,
  host: string,
  port: number,
): Promise<http.Server> {
  const limits = socketLimits(config.serve);
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeout,
      requestTimeout: limits.requestTimeout,
      keepAliveTimeout: limits.keepAliveTimeout,
      connectionsCheckingInterval: 1000,
    },
    app,
  );
  server.maxConnections = limits.maxConnections;
  server.timeout = 0; // no inactivity timeout on a socket whose request is being answered (a sign may wait)
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
  state: ServiceState;
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
