/**
 * Load: the built service under 64 connections of mixed tools/list, resources/read, check and
 * key_show for 60 s (ABUSE_LOAD_SECONDS shortens it locally; CI runs 60). No errors besides 429s by design (every
 * answer read: a JSON-RPC error or a tool error counts), the process's RSS stable over the second half of the run
 * (growth ≤ 10 %: a leak keeps growing; on a busy machine the first half may still be warming up),
 * no file-descriptor leak (/proc/PID/fd before and after). Then 1,000 idle connections held open while
 * `/health` must still answer within 100 ms at the median (none later than 1 s).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { RESOURCES } from '../../src/mcp/resources';
import { assertBuilt, BIN, writeYaml } from '../support/cli';
import { keyDirSecrets } from '../support/secrets';
import { ifSetUp } from '../support/set-up';
import { makeWorld, worldConfigDocument, type World } from '../support/world';
import { recordLedgerRows } from './support/ledger-rows';
import { mcpRequest, toolCall } from './support/mcp-client';
import { recordArtefact, recordFigures, recordSecrets } from './support/record';
import { issueTokens, scrapeMetrics, startServe, type ServeProcess } from './support/service';

const SUITE = 'load';
const SECONDS = Number(process.env.ABUSE_LOAD_SECONDS ?? 60);
const WARMUP_SECONDS = Math.min(10, Math.max(2, Math.round(SECONDS / 6)));
const CONNECTIONS = 64;
const IDLE_CONNECTIONS = 1_000;
/** A JSON-RPC error answer (the service writes the envelope in this order). */
const JSON_RPC_ERROR = /^\{"jsonrpc":"2\.0"(?:,"id":(?:\d+|"[^"]*"))?,"error":/;

interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  onResponse?: (status: number, body: string) => void;
}
interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
  timeout?: number;
}) => Promise<AutocannonResult>;
// autocannon ships no types; this is the part of its API used here. The project-wide declaration the benchmarks
// keep (bench/autocannon.d.ts) has no per-request `onResponse`, which this suite reads, so it is typed here.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a typed require keeps this suite's own autocannon type
const autocannon = require('autocannon') as Autocannon;

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]);
}

function fds(pid: number): { total: number; sockets: number; files: string[]; socketInodes: string[] } {
  const links = fs.readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return '';
    }
  });
  const socketInodes = links.filter((l) => l.startsWith('socket:[')).map((l) => l.slice(8, -1));
  return {
    total: links.length,
    sockets: socketInodes.length,
    files: links.filter((l) => !l.startsWith('socket:')).sort(),
    socketInodes,
  };
}

/**
 * The process's TCP sockets by what they are, from /proc/PID/net/tcp: connections the service accepted (its
 * port), connections its RPC client keeps to the chain (the chain's port), and the rest.
 */
interface SocketKinds {
  served: number;
  rpc: number;
  other: number;
  /** The other TCP sockets as `local remote state` (hex, as the kernel writes them), to tell what a leak is. */
  otherTcp: string[];
}

function socketKinds(pid: number, servicePort: number, chainPort: number): SocketKinds {
  const own = new Set(fds(pid).socketInodes);
  const out: SocketKinds = { served: 0, rpc: 0, other: 0, otherTcp: [] };
  const seen = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !own.has(f[9]!) || seen.has(f[9]!)) continue;
      seen.add(f[9]!);
      const port = (addr: string) => parseInt(addr.split(':')[1]!, 16);
      if (port(f[1]!) === servicePort) out.served++;
      else if (port(f[2]!) === chainPort) out.rpc++;
      else {
        out.other++;
        out.otherTcp.push(`${f[1]} ${f[2]} ${f[3]}`);
      }
    }
  }
  out.other += own.size - seen.size; // unix sockets and the like
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function healthLatency(url: string): Promise<number> {
  const started = performance.now();
  // A fresh connection each time: the question is whether the server still accepts and answers promptly.
  const res = await fetch(`${url}/health`, { headers: { connection: 'close' } });
  await res.text();
  if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
  return performance.now() - started;
}

describe('the service under load', () => {
  let w: World;
  let svc: ServeProcess;
  let token: string;

  beforeAll(async () => {
    assertBuilt(BIN.serve);
    w = await makeWorld({ keys: { alpha: {} } });
    recordSecrets(
      SUITE,
      keyDirSecrets(w.config.key_dir).map((s, i) => ({ label: `key file ${i}`, value: s })),
    );
    const issued = issueTokens(SUITE, [{ name: 'load', keys: ['alpha'] }]);
    token = issued.tokens[0]!.token;
    const configFile = path.join(w.dir, 'serve.yaml');
    // The in-flight cap and the token's share are sized above the 64 connections: this measures the service, not
    // its busy answer.
    writeYaml(
      configFile,
      worldConfigDocument(w, {
        log_level: 'warn',
        serve: {
          listen: '127.0.0.1:0',
          metrics: '127.0.0.1:0',
          tokens: issued.config,
          max_in_flight: 256,
          max_in_flight_per_token: 256,
          rate_limit_per_minute: 10_000_000,
        },
      }),
    );
    svc = await startServe(configFile, SUITE);
    for (let i = 0; i < 100 && (await fetch(`${svc.url}/ready`)).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 50));
  });

  afterAll(async () => {
    const service = ifSetUp(svc);
    if (service) {
      await scrapeMetrics(service.metricsUrl!, SUITE).catch(() => undefined);
      await service.stop();
    }
    const world = ifSetUp(w);
    if (world) recordLedgerRows((world.config.ledger as { path: string }).path, SUITE);
    await world?.close();
  });

  /** Unexpected answers: counted, the first few kept. */
  class Unexpected {
    count = 0;
    readonly samples: string[] = [];
    add(text: string): void {
      this.count++;
      if (this.samples.length < 10) this.samples.push(text);
    }
  }

  function mix(unexpected: Unexpected): AutocannonRequest[] {
    const specs = [
      mcpRequest('tools/list', {}, token),
      mcpRequest('resources/read', { uri: RESOURCES[0]!.uri }, token),
      toolCall('check', { payload: w.transfer('alpha', 1_000_000, 'load check'), key: 'alpha' }, token),
      toolCall('key_show', { key: 'alpha' }, token),
    ];
    return specs.map((s) => ({
      method: 'POST',
      path: '/mcp',
      headers: s.headers,
      body: JSON.stringify(s.body),
      // Every answer is read: a JSON-RPC error or a tool error is an error even on HTTP 200.
      onResponse: (status: number, body: string) => {
        if (status === 429) return;
        if (status !== 200 || JSON_RPC_ERROR.test(body) || body.includes('"isError":true'))
          unexpected.add(`${status} ${body.slice(0, 300)}`);
      },
    }));
  }

  it(
    `${SECONDS} s at ${CONNECTIONS} connections: only 429s by design, RSS stable, no fd leak`,
    async () => {
      const unexpected = new Unexpected();
      // Warm-up: the same mix, so code paths, pools and caches exist before anything is measured.
      await autocannon({ url: svc.url, connections: CONNECTIONS, duration: WARMUP_SECONDS, requests: mix(unexpected) });
      await new Promise((r) => setTimeout(r, 1_000));
      const servicePort = Number(new URL(svc.url).port);
      const chainPort = Number(new URL(w.config.cluster.rpc_url).port);
      const fdBefore = fds(svc.pid);
      const socketsBefore = socketKinds(svc.pid, servicePort, chainPort);

      const rss: number[] = [];
      const sampler = setInterval(() => rss.push(rssKb(svc.pid)), 1_000);
      let result: AutocannonResult;
      try {
        result = await autocannon({
          url: svc.url,
          connections: CONNECTIONS,
          duration: SECONDS,
          requests: mix(unexpected),
          timeout: 10,
        });
      } finally {
        clearInterval(sampler);
      }
      // Closed by the client, released by the server: the last closes are processed after autocannon returns, and
      // on a busy machine that takes a while. Wait (up to 30 s) until the served and the other sockets are back to
      // what they were; a real leak stays and fails below.
      let socketsAfter = socketKinds(svc.pid, servicePort, chainPort);
      const settled = (s: SocketKinds) => s.served <= socketsBefore.served && s.other <= socketsBefore.other;
      for (let i = 0; i < 300 && !settled(socketsAfter); i++) {
        await new Promise((r) => setTimeout(r, 100));
        socketsAfter = socketKinds(svc.pid, servicePort, chainPort);
      }
      const fdAfter = fds(svc.pid);

      const codes = Object.keys(result.statusCodeStats);
      // From the middle of the run to its end: the warm-up above does less work on a loaded machine, and the heap
      // may still be growing to its working size in the first half; a leak grows through the second half too.
      const window = Math.max(1, Math.min(5, Math.floor(rss.length / 4)));
      const middle = Math.floor(rss.length / 2);
      const rssStart = median(rss.slice(Math.max(0, middle - window), middle + 1));
      const rssEnd = median(rss.slice(-window));
      const growth = (rssEnd - rssStart) / rssStart;
      const figures = {
        requests: result.requests.total,
        rps: Math.round(result.requests.average),
        p50_ms: result.latency.p50,
        p99_ms: result.latency.p99,
        errors: result.errors,
        timeouts: result.timeouts,
        status_codes: codes.join(' '),
        rss_mid_mb: Math.round(rssStart / 1024),
        rss_end_mb: Math.round(rssEnd / 1024),
        rss_growth_pct: Math.round(growth * 1000) / 10,
        fd_before: fdBefore.total,
        fd_after: fdAfter.total,
        sockets_before: `served ${socketsBefore.served}, rpc ${socketsBefore.rpc}, other ${socketsBefore.other}`,
        sockets_after: `served ${socketsAfter.served}, rpc ${socketsAfter.rpc}, other ${socketsAfter.other}`,
        other_tcp_after: socketsAfter.otherTcp.join('; '),
        unexpected_answers: unexpected.count,
      };
      recordFigures(SUITE, figures);
      console.log(`load: ${JSON.stringify(figures)}`);
      recordArtefact(SUITE, 'response', unexpected.samples.join('\n'));

      expect(unexpected.samples).toEqual([]);
      expect(unexpected.count).toBe(0);
      expect(result.errors).toBe(0);
      expect(result.timeouts).toBe(0);
      expect(codes.filter((c) => c !== '200' && c !== '429')).toEqual([]);
      expect(result.requests.total).toBeGreaterThan(SECONDS * 50);
      expect(growth).toBeLessThanOrEqual(0.1);
      // No descriptor leak: no file stays open; every connection the service accepted is closed again; other
      // sockets are back to what they were. The RPC client's keep-alive pool may keep sockets the load opened (the
      // chain drops idle ones after 60 s), bounded by its maxSockets (64, src/rpc/json-rpc-transport.ts).
      expect(fdAfter.files).toEqual(fdBefore.files);
      expect(socketsAfter.served).toBeLessThanOrEqual(socketsBefore.served);
      expect(socketsAfter.other).toBeLessThanOrEqual(socketsBefore.other);
      expect(socketsAfter.rpc).toBeLessThanOrEqual(64);
    },
    (SECONDS + 120) * 1000,
  );

  it(`${IDLE_CONNECTIONS} idle connections held open: /health still answers, within 100 ms at the median`, async () => {
    // Only the service's accepted connections are counted: the RPC client's keep-alive pool to the chain grows and
    // shrinks on its own meanwhile.
    const servicePort = Number(new URL(svc.url).port);
    const chainPort = Number(new URL(w.config.cluster.rpc_url).port);
    const served = (): number => socketKinds(svc.pid, servicePort, chainPort).served;
    const servedBefore = served();
    const idle: net.Socket[] = [];
    try {
      await Promise.all(
        Array.from(
          { length: IDLE_CONNECTIONS },
          () =>
            new Promise<void>((resolve, reject) => {
              const s = net.connect({ host: '127.0.0.1', port: Number(new URL(svc.url).port) }, () => resolve());
              s.on('error', reject);
              idle.push(s);
            }),
        ),
      );
      // The server has accepted them all (each is a descriptor in the service process).
      for (let i = 0; i < 50 && served() < servedBefore + IDLE_CONNECTIONS; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(served()).toBeGreaterThanOrEqual(servedBefore + IDLE_CONNECTIONS);
      const latencies: number[] = [];
      for (let i = 0; i < 20; i++) latencies.push(await healthLatency(svc.url));
      const worst = Math.max(...latencies);
      recordFigures(SUITE, {
        idle_connections: IDLE_CONNECTIONS,
        health_max_ms: Math.round(worst * 10) / 10,
        health_p50_ms: Math.round(median(latencies) * 10) / 10,
      });
      // Prompt at the median; the worst of 20 only bounded, since one scheduling hiccup of a loaded machine is
      // no sign of starvation (a server that idle sockets starve answers late by whole seconds, or not at all).
      expect(median(latencies)).toBeLessThan(100);
      expect(worst).toBeLessThan(1_000);
      expect(idle.every((s) => !s.destroyed)).toBe(true);
    } finally {
      for (const s of idle) s.destroy();
    }
    // Closed by the client, released by the server.
    for (let i = 0; i < 100 && served() > servedBefore; i++) await new Promise((r) => setTimeout(r, 50));
    expect(served()).toBeLessThanOrEqual(servedBefore);
  }, 60_000);
});
