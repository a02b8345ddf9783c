/**
 * Prometheus metrics (prom-client), served on their own listener. Hot-path updates go through cached label
 * children, so a request costs a map lookup and an add.
 */
import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { McpObserver } from '../mcp/service';

const KNOWN_METHODS = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'initialize',
]);

export class Metrics implements McpObserver {
  readonly registry = new Registry();
  private readonly toolResults: Counter<'tool' | 'outcome'>;
  private readonly failedChecks: Counter<'check'>;
  private readonly toolDuration: Histogram<'tool'>;
  private readonly rpcDuration: Histogram<'method' | 'ok'>;
  /** Requests counted in plain numbers by method, then status; handed to prom-client when /metrics is scraped. */
  private readonly requestCounts = new Map<string, Map<number, { n: number; reported: number }>>();
  private readonly toolChildren = new Map<
    string,
    { result: { inc(): void }; duration: { observe(v: number): void } }
  >();

  constructor(opts: { haltedKeys?: () => Promise<number>; inFlight?: () => number; defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    // Counted per request in plain numbers (prom-client's inc per request showed in the profile) and added to the
    // counter at scrape time.
    const requestCounts = this.requestCounts;
    new Counter({
      name: 'signer_http_requests_total',
      help: 'HTTP requests by MCP method (or route) and status',
      labelNames: ['method', 'status'],
      registers,
      collect() {
        for (const [method, byStatus] of requestCounts) {
          for (const [status, c] of byStatus) {
            if (c.n > c.reported) this.inc({ method, status: String(status) }, c.n - c.reported);
            c.reported = c.n;
          }
        }
      },
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
    // Read at scrape time rather than counted per request: two gauge updates per request were measurable.
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
    let byStatus = this.requestCounts.get(m);
    if (!byStatus) {
      byStatus = new Map();
      this.requestCounts.set(m, byStatus);
    }
    const c = byStatus.get(status);
    if (c) c.n++;
    else byStatus.set(status, { n: 1, reported: 0 });
  }

  toolResult(tool: string, outcome: string, failedCheck: string | null, durationMs: number): void {
    const k = `${tool} ${outcome}`;
    let child = this.toolChildren.get(k);
    if (!child) {
      child = { result: this.toolResults.labels(tool, outcome), duration: this.toolDuration.labels(tool) };
      this.toolChildren.set(k, child);
    }
    child.result.inc();
    if (failedCheck !== null) this.failedChecks.labels(failedCheck).inc();
    // key_show answers from a one-second cache: its duration says nothing an operator acts on.
    if (outcome !== 'invalid_arguments' && tool !== 'key_show') child.duration.observe(durationMs / 1000);
  }

  /** Hook for the chain client: one observation per JSON-RPC call. */
  rpc(method: string, durationMs: number, ok: boolean): void {
    this.rpcDuration.labels(method, ok ? 'true' : 'false').observe(durationMs / 1000);
  }

  /** The /metrics listener; resolves once listening. */
  listen(host: string, port: number): Promise<http.Server> {
    const server = http.createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
        return;
      }
      this.registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${(e as Error).message}\n`),
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  }
}
