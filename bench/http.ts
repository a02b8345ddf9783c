/**
 * The MCP service under load on loopback (issue: the MCP service), in one run beside
 * (a) a bare node:http server answering our tools/list bytes — the ceiling — and
 * (b) the official SDK's stateless handler serving the same four tools behind the same bearer check.
 * autocannon, 32 connections, 1 s unmeasured warm-up then the measured window, each server its own process,
 * BENCH_ROUNDS rounds (default 3) reported as medians.
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort, makeFixture, META, rssMiB, startTimed, type Started } from './service-fixture';
import { processCpuSeconds, type BenchLine } from './stats';
import { measureRelayStartup } from './relay';

const CONNECTIONS = 32;
const SERVE = path.resolve(__dirname, '../src/cli/serve.js');
const BARE = path.resolve(__dirname, 'servers/bare.js');
const SDK = path.resolve(__dirname, 'servers/sdk-handler.js');

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

function requests(token: string) {
  const base = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2026-07-28',
  };
  return {
    list: {
      headers: { ...base, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } }),
    },
    read: {
      headers: { ...base, 'mcp-method': 'resources/read', 'mcp-name': 'signer://docs/skill' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'resources/read',
        params: { uri: 'signer://docs/skill', _meta: META },
      }),
    },
    keyShow: {
      headers: { ...base, 'mcp-method': 'tools/call', 'mcp-name': 'key_show', 'mcp-param-key': 'demo' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'key_show', arguments: { key: 'demo' }, _meta: META },
      }),
    },
  };
}

async function load(
  port: number,
  req: { headers: Record<string, string>; body: string },
  seconds: number,
  label: string,
): Promise<Load> {
  process.stderr.write(`bench: http: ${label} for ${seconds} s…\n`);
  const opts = {
    url: `http://127.0.0.1:${port}/mcp`,
    method: 'POST' as const,
    headers: req.headers,
    body: req.body,
    connections: CONNECTIONS,
  };
  await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration: seconds });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

/**
 * CPU time per request of ours against the bare server, both loaded at the same moment (16 connections each):
 * throughput on this shared 2-core machine moves with whatever else the host runs, while two servers measured side
 * by side see the same machine, so this ratio is the steadier figure of what our stack costs.
 */
async function cpuPerRequestSideBySide(
  bare: { port: number; pid: number; req: { headers: Record<string, string>; body: string } },
  ours: { port: number; pid: number; req: { headers: Record<string, string>; body: string } },
  seconds: number,
): Promise<number> {
  const opts = (t: typeof bare) => ({
    url: `http://127.0.0.1:${t.port}/mcp`,
    method: 'POST' as const,
    headers: t.req.headers,
    body: t.req.body,
    connections: CONNECTIONS / 2,
  });
  await Promise.all([autocannon({ ...opts(bare), duration: 1 }), autocannon({ ...opts(ours), duration: 1 })]);
  const before = processCpuSeconds([bare.pid, ours.pid]);
  const [b, o] = await Promise.all([
    autocannon({ ...opts(bare), duration: seconds }),
    autocannon({ ...opts(ours), duration: seconds }),
  ]);
  const after = processCpuSeconds([bare.pid, ours.pid]);
  const perRequest = (pid: number, total: number) => (after.get(pid)! - before.get(pid)!) / total;
  return perRequest(ours.pid, o.requests.total) / perRequest(bare.pid, b.requests.total);
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/** The round with the median throughput (its latencies with it). */
function medianLoad(ls: Load[]): Load {
  return [...ls].sort((x, y) => x.rps - y.rps)[Math.floor(ls.length / 2)]!;
}

const line = (name: string, l: Load, extra: Partial<BenchLine> = {}): BenchLine => ({
  name,
  value: l.rps,
  unit: 'req/s',
  note: `p50 ${l.p50} ms, p99 ${l.p99} ms${l.non2xx || l.errors ? `, ${l.non2xx} non-2xx, ${l.errors} errors` : ''}`,
  ...extra,
});

export async function runHttpBench(seconds: number): Promise<BenchLine[]> {
  const lines: BenchLine[] = [];
  const ourPort = await freePort();
  const fixture = await makeFixture({ port: ourPort });
  const req = requests(fixture.token);
  const started: Started[] = [];
  try {
    const ours = await startTimed([SERVE, '--config', fixture.configFile], {}, ourPort, req.list);
    started.push(ours);
    const bodyFile = path.join(fixture.dir, 'tools-list.json');
    fs.writeFileSync(bodyFile, ours.firstBody);
    const barePort = await freePort();
    const bare = await startTimed([BARE], { PORT: String(barePort), BODY_FILE: bodyFile }, barePort, req.list);
    started.push(bare);
    const sdkPort = await freePort();
    const sdk = await startTimed(
      [SDK],
      { PORT: String(sdkPort), TOKEN_SHA256: fixture.tokenSha256 },
      sdkPort,
      req.list,
    );
    started.push(sdk);

    // Rounds alternate the targets so a slow moment of the shared machine does not fall on one of them;
    // each figure is the median over the rounds, each ratio the median of the rounds' own ratios.
    const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? '3'));
    const runs: Record<'a' | 'b' | 'bCall' | 'list' | 'read' | 'keyShow', Load[]> = {
      a: [],
      b: [],
      bCall: [],
      list: [],
      read: [],
      keyShow: [],
    };
    for (let r = 1; r <= rounds; r++) {
      const tag = `round ${r}/${rounds}`;
      runs.a.push(await load(barePort, req.list, seconds, `${tag}: (a) bare tools/list`));
      runs.list.push(await load(ourPort, req.list, seconds, `${tag}: ours tools/list`));
      runs.read.push(await load(ourPort, req.read, seconds, `${tag}: ours resources/read`));
      runs.keyShow.push(await load(ourPort, req.keyShow, seconds, `${tag}: ours key_show`));
      runs.b.push(await load(sdkPort, req.list, seconds, `${tag}: (b) SDK tools/list`));
      runs.bCall.push(await load(sdkPort, req.keyShow, seconds, `${tag}: (b) SDK key_show`));
    }
    const mem = rssMiB(ours.child.pid!);

    const sideBySide: { name: string; ratio: number }[] = [];
    for (const [name, r] of [
      ['tools/list', req.list],
      ['resources/read', req.read],
      ['key_show', req.keyShow],
    ] as const) {
      process.stderr.write(`bench: http: ${name} beside the bare server, CPU per request…\n`);
      const ratio = await cpuPerRequestSideBySide(
        { port: barePort, pid: bare.child.pid!, req: req.list },
        { port: ourPort, pid: ours.child.pid!, req: r },
        seconds,
      );
      sideBySide.push({ name, ratio });
    }
    const a = medianLoad(runs.a);
    const b = medianLoad(runs.b);

    const clean = (ls: Load[]) => ls.every((l) => l.non2xx === 0 && l.errors === 0);
    lines.push(line(`(a) bare node:http, fixed tools/list bytes (ceiling), median of ${rounds}`, a));
    lines.push(
      line('(b) official SDK stateless handler, tools/list', b, {
        note: `${line('', b).note}; ${median(runs.b.map((x, i) => x.rps / runs.a[i]!.rps)).toFixed(3)}x ceiling`,
      }),
    );
    lines.push(line('(b) official SDK stateless handler, tools/call key_show', medianLoad(runs.bCall)));
    for (const [name, ls] of [
      ['tools/list', runs.list],
      ['resources/read', runs.read],
      ['tools/call key_show (ledger + RPC)', runs.keyShow],
    ] as const) {
      const l = medianLoad(ls);
      const ratio = median(ls.map((x, i) => x.rps / runs.a[i]!.rps));
      const vsSdk = median(ls.map((x, i) => x.rps / runs.b[i]!.rps));
      lines.push(
        line(`ours, full middleware stack: ${name}`, l, {
          target: '>= 0.5x ceiling, p99 <= 10 ms',
          ok: ratio >= 0.5 && l.p99 <= 10 && clean(ls),
          note: `${ratio.toFixed(2)}x ceiling (rounds: ${ls.map((x, i) => (x.rps / runs.a[i]!.rps).toFixed(2)).join(', ')}), ${vsSdk.toFixed(1)}x SDK; p50 ${l.p50} ms, p99 ${l.p99} ms${clean(ls) ? '' : ', some non-2xx or errors'}`,
        }),
      );
    }
    lines.push({
      name: 'ours: CPU per request vs bare, loaded side by side (tools/list)',
      value: sideBySide[0]!.ratio,
      unit: 'x',
      note: `${sideBySide.map((x) => `${x.name} ${x.ratio.toFixed(2)}x`).join(', ')}; 0.5x of the ceiling's throughput needs at most 2x`,
    });
    lines.push({
      name: 'ours: RSS after load (peak)',
      value: mem.rss,
      unit: 'MiB',
      target: '<= 120 MB',
      ok: mem.hwm * 1.048576 <= 120,
      note: `peak ${mem.hwm.toFixed(1)} MiB`,
    });
    lines.push({
      name: 'ours: process start to first answered request',
      value: ours.startupMs,
      unit: 'ms',
      target: '<= 300',
      ok: ours.startupMs <= 300,
      note: `SDK handler ${sdk.startupMs.toFixed(0)} ms, bare ${bare.startupMs.toFixed(0)} ms`,
    });

    process.stderr.write('bench: http: relay start-up…\n');
    const relayRuns = await measureRelayStartup({
      serviceUrl: `http://127.0.0.1:${ourPort}/mcp`,
      tokenFile: fixture.tokenFile,
      runs: 15,
    });
    const sorted = [...relayRuns].sort((x, y) => x - y);
    const relayMedian = sorted[Math.floor(sorted.length / 2)]!;
    lines.push({
      name: 'relay: process start to first reply (median of 15)',
      value: relayMedian,
      unit: 'ms',
      target: '<= 150',
      ok: relayMedian <= 150,
      note: `min ${sorted[0]!.toFixed(0)}, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`,
    });
  } finally {
    for (const s of started) await s.stop();
    await fixture.close();
  }
  return lines;
}
