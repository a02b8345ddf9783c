/**
 * Prometheus metrics (prom-client), served on their own listener (docs/running.md says why it is not on the
 * service's port).
 */
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METHODS } from '../mcp/protocol';
import type { McpObserver } from '../mcp/service';
import type { DeliveryObserver } from '../notify/deliverer';
import type { EngineAlert, EngineObserver } from '../signer/engine-deps';
import { errorMessage } from '../util/errors';
import { compileAllowList, guardRequest } from './host-origin';

/** Method labels kept as they are (anything else is `other`, so a client cannot grow the label set). */
const KNOWN_METHODS = new Set<string>([...METHODS, 'initialize']);

export class Metrics implements McpObserver, EngineObserver, DeliveryObserver {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'status'>;
  private readonly toolResults: Counter<'tool' | 'outcome'>;
  private readonly failedChecks: Counter<'check'>;
  private readonly toolDuration: Histogram<'tool'>;
  private readonly rpcDuration: Histogram<'method' | 'ok'>;
  private readonly alerts: Counter<'kind'>;
  private readonly watchCalls: Histogram<'call'>;
  private readonly notifications: Counter<'hook' | 'result'>;

  constructor(
    opts: {
      haltedKeys?: () => Promise<number>;
      inFlight?: () => number;
      /** Notifications waiting in the outbox for delivery (first attempt or a retry), read at scrape time. */
      outboxPending?: () => Promise<number>;
      defaultMetrics?: boolean;
    } = {},
  ) {
    const registers = [this.registry];
    this.requests = new Counter({
      name: 'signer_http_requests_total',
      help: 'HTTP requests by MCP method (or route) and status',
      labelNames: ['method', 'status'],
      registers,
    });
    this.toolResults = new Counter({
      name: 'signer_tool_results_total',
      help: 'Tool calls by tool and outcome',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.failedChecks = new Counter({
      name: 'signer_failed_checks_total',
      help: 'Refusals by failed check',
      labelNames: ['check'],
      registers,
    });
    this.toolDuration = new Histogram({
      name: 'signer_tool_duration_seconds',
      help: 'Duration of check, sign and halt, seconds',
      labelNames: ['tool'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 240],
      registers,
    });
    this.rpcDuration = new Histogram({
      name: 'signer_rpc_duration_seconds',
      help: 'Latency of Solana JSON-RPC calls, seconds',
      labelNames: ['method', 'ok'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
      registers,
    });
    this.alerts = new Counter({
      name: 'signer_alerts_total',
      help: 'Things an operator must look at, by kind (watch_unresolved, spend_over_reservation); each is also logged',
      labelNames: ['kind'],
      registers,
    });
    this.watchCalls = new Histogram({
      name: 'signer_watch_rpc_calls_per_poll',
      help: "RPC calls one poll of the sign-only watcher made to read keys' histories, by call",
      labelNames: ['call'],
      buckets: [0, 1, 2, 4, 10, 25, 50, 100, 200],
      registers,
    });
    this.notifications = new Counter({
      name: 'signer_notifications_total',
      help: 'Webhook delivery attempts by hook (host~hash of its URL) and result: delivered, retrying (failed, tried again later) or failed (given up)',
      labelNames: ['hook', 'result'],
      registers,
    });
    const outboxPending = opts.outboxPending;
    new Gauge({
      name: 'signer_notifications_pending',
      help: 'Webhook notifications in the outbox not yet delivered nor given up on (all replicas sharing the ledger)',
      registers,
      async collect() {
        if (outboxPending) this.set(await outboxPending().catch(() => Number.NaN));
      },
    });
    // Read at scrape time: the app's own count is the truth.
    const inFlight = opts.inFlight;
    new Gauge({
      name: 'signer_http_in_flight',
      help: 'HTTP requests being handled now',
      registers,
      collect() {
        if (inFlight) this.set(inFlight());
      },
    });
    const haltedKeys = opts.haltedKeys;
    new Gauge({
      name: 'signer_halted_keys',
      help: 'Configured keys that are halted now',
      registers,
      async collect() {
        if (haltedKeys) this.set(await haltedKeys().catch(() => Number.NaN));
      },
    });
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'signer_' });
  }

  request(method: string | null, status: number): void {
    const m = method === null ? 'none' : KNOWN_METHODS.has(method) || method.startsWith('/') ? method : 'other';
    this.requests.inc({ method: m, status: String(status) });
  }

  toolResult(tool: string, outcome: string, failedCheck: string | null, durationMs: number): void {
    this.toolResults.inc({ tool, outcome });
    if (failedCheck !== null) this.failedChecks.inc({ check: failedCheck });
    if (outcome !== 'invalid_arguments') this.toolDuration.observe({ tool }, durationMs / 1000);
  }

  /** Hook for the chain client: one observation per JSON-RPC call. */
  rpc(method: string, durationMs: number, ok: boolean): void {
    this.rpcDuration.labels(method, ok ? 'true' : 'false').observe(durationMs / 1000);
  }

  alert(a: EngineAlert): void {
    this.alerts.inc({ kind: a.kind });
  }

  delivered(hook: string): void {
    this.notifications.inc({ hook, result: 'delivered' });
  }

  retrying(hook: string): void {
    this.notifications.inc({ hook, result: 'retrying' });
  }

  failed(hook: string): void {
    this.notifications.inc({ hook, result: 'failed' });
  }

  watchPoll(cost: { listings: number; reads: number }): void {
    this.watchCalls.observe({ call: 'getSignaturesForAddress' }, cost.listings);
    this.watchCalls.observe({ call: 'getTransaction' }, cost.reads);
  }

  /**
   * The /metrics listener; resolves once listening. A scraper needs no keep-alive and sends no body, so the
   * listener holds few sockets and drops slow ones quickly. Host and Origin must name an `allowed_hosts` entry, as
   * on the MCP listener (the same guard), so a page in the operator's browser cannot read it by DNS rebinding.
   */
  listen(host: string, port: number, allowedHosts: readonly string[]): Promise<http.Server> {
    const allow = compileAllowList(allowedHosts);
    const server = http.createServer({ headersTimeout: 5000, requestTimeout: 10_000 }, (req, res) => {
      const verdict = guardRequest(allow, req, false);
      if (!verdict.ok) {
        res.writeHead(403, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: verdict.error }));
        return;
      }
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${errorMessage(e)}\n`),
      );
    });
    server.maxConnections = 16;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }
}
