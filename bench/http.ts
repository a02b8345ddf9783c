/**
 * The HTTP layer under load on loopback, side by side in one run (docs/performance.md, "HTTP"):
 *   ours        the service's tools/list (the whole card stack, configured: docs/running.md)
 *   card stack  a naive app of the card's libraries with defaults (servers/card-stack.ts), same reply bytes
 *   express     bare Express 5, one route, same bytes
 *   node:http   bare node:http, same bytes
 *   SDK         the official MCP SDK v2 stateless handler, the same four tools behind a bearer check
 * Each server is its own process. autocannon with 32 connections (1 s unmeasured warm-up, then the measured
 * window), BENCH_ROUNDS rounds (default 3) alternating the targets, medians; CPU µs per request from /proc over each
 * measured window; p99 at 32 connections and at 1; RSS after load (ours beside the card stack's: the target);
 * process start to first answer (median of BENCH_STARTS fresh processes per target, default 7, alternating).
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort, makeFixture, META, rssMiB, startTimed, type Started } from './service-fixture';
import { processCpuSeconds, type BenchLine } from './stats';
import { measureRelayStartup } from './relay';
import { SERVE_NODE_FLAGS } from '../src/cli/serve-launch';

const CONNECTIONS = 32;
const ONE_CONNECTION_SECONDS = 3;
const SERVE = path.resolve(__dirname, '../src/cli/serve.js');
const SERVERS = path.resolve(__dirname, 'servers');

type Target = 'ours' | 'cardStack' | 'express' | 'node' | 'sdk';
const TARGETS: { id: Target; label: string }[] = [
  { id: 'ours', label: 'ours: the service, tools/list' },
  { id: 'cardStack', label: 'naive card stack (defaults), same bytes' },
  { id: 'express', label: 'bare Express 5, same bytes' },
  { id: 'node', label: 'bare node:http, same bytes' },
  { id: 'sdk', label: 'official SDK v2 stateless handler, tools/list' },
];

interface Request {
  headers: Record<string, string>;
  body: string;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerRequest: number;
  non2xx: number;
  errors: number;
  /** The process's resident set right after the measured window. */
  rssMiB: number;
}

function requests(token: string): Record<'list' | 'read' | 'keyShow', Request> {
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
  target: { port: number; pid: number },
  req: Request,
  seconds: number,
  connections: number,
  label: string,
): Promise<Load> {
  process.stderr.write(`bench: http: ${label}, ${connections} connection(s), ${seconds} s…\n`);
  const opts = {
    url: `http://127.0.0.1:${target.port}/mcp`,
    method: 'POST' as const,
    headers: req.headers,
    body: req.body,
    connections,
  };
  await autocannon({ ...opts, duration: 1 });
  const before = processCpuSeconds([target.pid]).get(target.pid) ?? NaN;
  const r = await autocannon({ ...opts, duration: seconds });
  const after = processCpuSeconds([target.pid]).get(target.pid) ?? NaN;
  const rss = rssMiB(target.pid).rss;
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUsPerRequest: ((after - before) * 1e6) / Math.max(1, r.requests.total),
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    rssMiB: rss,
  };
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;

/** The round with the median throughput (its latencies with it). */
function medianLoad(ls: Load[]): Load {
  const sorted = [...ls].sort((x, y) => x.rps - y.rps);
  const m = sorted[Math.floor(sorted.length / 2)];
  if (m === undefined) throw new Error('no rounds');
  return m;
}

const clean = (ls: Load[]): boolean => ls.every((l) => l.non2xx === 0 && l.errors === 0);

function note(l: Load, extra = ''): string {
  const faults = l.non2xx || l.errors ? `, ${l.non2xx} non-2xx, ${l.errors} errors` : '';
  return `${l.cpuUsPerRequest.toFixed(0)} µs CPU/req, p50 ${l.p50} ms, p99 ${l.p99} ms${faults}${extra}`;
}

export async function runHttpBench(seconds: number): Promise<BenchLine[]> {
  const lines: BenchLine[] = [];
  const ourPort = await freePort();
  const fixture = await makeFixture({ port: ourPort });
  const req = requests(fixture.token);
  const started = new Map<Target, Started & { port: number }>();
  try {
    const bodyFile = path.join(fixture.dir, 'tools-list.json');
    // Each target as a command: `port` is where it listens. The service runs from the built entrypoint (the bundle
    // and its code cache) with the V8 flags of its #! line, as the image's sa-forge-signer-serve runs it.
    // A state directory belongs to one running service: the fresh processes of the start-up runs, started while the
    // measured one still runs, get one of their own (each stops before the next starts).
    const startUpStateDir = path.join(fixture.dir, 'start-up-state');
    const commands: Record<Target, (port: number, stateDir?: string) => { args: string[]; env: NodeJS.ProcessEnv }> = {
      ours: (port, stateDir) => ({
        args: [...SERVE_NODE_FLAGS, SERVE, '--config', fixture.configFile],
        env: {
          SIGNER_LOG_PRETTY: '0',
          SIGNER_LISTEN: `127.0.0.1:${port}`,
          ...(stateDir === undefined ? {} : { SIGNER_STATE_DIR: stateDir }),
        },
      }),
      cardStack: (port) => ({
        args: [path.join(SERVERS, 'card-stack.js')],
        env: { BODY_FILE: bodyFile, LOG_FILE: path.join(fixture.dir, 'card-stack.log'), PORT: String(port) },
      }),
      express: (port) => ({
        args: [path.join(SERVERS, 'bare-express.js')],
        env: { BODY_FILE: bodyFile, PORT: String(port) },
      }),
      node: (port) => ({ args: [path.join(SERVERS, 'bare.js')], env: { BODY_FILE: bodyFile, PORT: String(port) } }),
      sdk: (port) => ({
        args: [path.join(SERVERS, 'sdk-handler.js')],
        env: { TOKEN_SHA256: fixture.tokenSha256, PORT: String(port) },
      }),
    };
    const startOne = async (id: Target, port: number, stateDir?: string): Promise<Started> => {
      const { args, env } = commands[id](port, stateDir);
      return startTimed(args, env, port, req.list);
    };
    // ours first: the others answer with the bytes of its tools/list
    const service = await startOne('ours', ourPort);
    started.set('ours', { ...service, port: ourPort });
    fs.writeFileSync(bodyFile, service.firstBody);
    for (const t of TARGETS.filter((x) => x.id !== 'ours')) {
      const port = await freePort();
      started.set(t.id, { ...(await startOne(t.id, port)), port });
    }
    // Start-up: fresh processes, alternating, each stopped after its first answer (one start alone is mostly the
    // machine's noise).
    const startRuns = Math.max(1, Number(process.env.BENCH_STARTS ?? '7'));
    const startMs = new Map<Target, number[]>(TARGETS.map((t) => [t.id, []]));
    process.stderr.write(`bench: http: start-up, ${startRuns} fresh processes per target…\n`);
    // Unmeasured: the first start creates the ledger; the measured ones start on it, as a restart does.
    await (await startOne('ours', await freePort(), startUpStateDir)).stop();
    for (let i = 0; i < startRuns; i++)
      for (const t of TARGETS) {
        const s = await startOne(t.id, await freePort(), startUpStateDir);
        startMs.get(t.id)?.push(s.startupMs);
        await s.stop();
      }
    const startup = (id: Target): number => median(startMs.get(id) ?? []);
    const at = (id: Target): { port: number; pid: number } => {
      const s = started.get(id);
      if (s?.child.pid === undefined) throw new Error(`${id} is not running`);
      return { port: s.port, pid: s.child.pid };
    };

    // Rounds alternate the targets so a slow moment of the shared machine does not fall on one of them; each
    // figure is the median over the rounds, each ratio the median of the rounds' own ratios.
    const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? '3'));
    const get = (m: Map<Target, Load[]>, id: Target): Load[] => m.get(id) ?? [];
    const runs = new Map<Target, Load[]>(TARGETS.map((t) => [t.id, []]));
    const oneConnection = new Map<Target, Load[]>(TARGETS.map((t) => [t.id, []]));
    const oursRead: Load[] = [];
    const oursKeyShow: Load[] = [];
    for (let r = 1; r <= rounds; r++) {
      const tag = `round ${r}/${rounds}`;
      for (const t of TARGETS)
        runs.get(t.id)?.push(await load(at(t.id), req.list, seconds, CONNECTIONS, `${tag}: ${t.label}`));
      for (const t of TARGETS)
        oneConnection.get(t.id)?.push(await load(at(t.id), req.list, ONE_CONNECTION_SECONDS, 1, `${tag}: ${t.label}`));
      oursRead.push(await load(at('ours'), req.read, seconds, CONNECTIONS, `${tag}: ours resources/read`));
      oursKeyShow.push(await load(at('ours'), req.keyShow, seconds, CONNECTIONS, `${tag}: ours key_show`));
    }
    // RSS after load, two ways, each the same for every target: right after its own 32-connection load (median of
    // the rounds: the target), and at the end, when every process has idled while the others were loaded.
    const afterLoad = (id: Target): number => median(get(runs, id).map((l) => l.rssMiB));
    const roundsRss = (id: Target): string =>
      get(runs, id)
        .map((l) => l.rssMiB.toFixed(0))
        .join(', ');
    const settled = Object.fromEntries(TARGETS.map((t) => [t.id, rssMiB(at(t.id).pid)])) as Record<
      Target,
      { rss: number; hwm: number }
    >;

    const ratio = (a: Target, b: Target): number =>
      median(get(runs, a).map((x, i) => x.rps / (get(runs, b)[i]?.rps ?? NaN)));
    for (const t of TARGETS) {
      const l = medianLoad(get(runs, t.id));
      const one = medianLoad(get(oneConnection, t.id));
      lines.push({
        name: t.label,
        value: l.rps,
        unit: 'req/s',
        note: note(
          l,
          `; ${ratio(t.id, 'node').toFixed(2)}x node:http; 1 conn p99 ${one.p99} ms; RSS ${afterLoad(t.id).toFixed(0)} MiB after load, ${settled[t.id].rss.toFixed(0)} settled; start ${startup(t.id).toFixed(0)} ms`,
        ),
      });
    }

    const ours = medianLoad(get(runs, 'ours'));
    const card = medianLoad(get(runs, 'cardStack'));
    const vsCard = ratio('ours', 'cardStack');
    const vsSdk = ratio('ours', 'sdk');
    lines.push({
      name: 'ours vs the naive card stack (throughput)',
      value: vsCard,
      unit: 'x',
      target: '>= 1.0x',
      ok: vsCard >= 1.0 && clean(get(runs, 'ours')),
      note: `rounds: ${get(runs, 'ours')
        .map((x, i) => (x.rps / (get(runs, 'cardStack')[i]?.rps ?? NaN)).toFixed(2))
        .join(', ')}`,
    });
    lines.push({
      name: 'ours vs the official SDK handler (throughput)',
      value: vsSdk,
      unit: 'x',
      target: '>= 3x',
      ok: vsSdk >= 3,
    });
    lines.push({
      name: 'ours: p99 at 32 connections vs the card stack',
      value: ours.p99,
      unit: 'ms',
      target: `<= card stack's (${card.p99} ms)`,
      ok: ours.p99 <= card.p99,
    });
    const oneP99 = medianLoad(get(oneConnection, 'ours')).p99;
    lines.push({ name: 'ours: p99 at 1 connection', value: oneP99, unit: 'ms', target: '<= 3 ms', ok: oneP99 <= 3 });
    for (const [name, ls] of [
      ['ours: resources/read', oursRead],
      ['ours: tools/call key_show (ledger + RPC)', oursKeyShow],
    ] as const) {
      const l = medianLoad(ls);
      lines.push({ name, value: l.rps, unit: 'req/s', note: note(l) });
    }
    lines.push({
      name: 'ours: RSS after load (tools/list, 32 connections) vs the naive card stack',
      value: afterLoad('ours'),
      unit: 'MiB',
      target: `<= card stack's (${afterLoad('cardStack').toFixed(1)} MiB)`,
      ok: afterLoad('ours') <= afterLoad('cardStack'),
      note: `${(afterLoad('ours') / afterLoad('cardStack')).toFixed(2)}x; rounds ${roundsRss('ours')} vs ${roundsRss('cardStack')} MiB; settled at the end ${settled.ours.rss.toFixed(1)} vs ${settled.cardStack.rss.toFixed(1)} MiB; peak ${settled.ours.hwm.toFixed(1)} vs ${settled.cardStack.hwm.toFixed(1)} MiB`,
    });
    const startupMs = startup('ours');
    const oursStarts = [...(startMs.get('ours') ?? [])].sort((x, y) => x - y);
    lines.push({
      name: `ours: process start to first answered request (median of ${startRuns})`,
      value: startupMs,
      unit: 'ms',
      target: '<= 300',
      ok: startupMs <= 300,
      note: `min ${(oursStarts[0] ?? NaN).toFixed(0)}, max ${(oursStarts[oursStarts.length - 1] ?? NaN).toFixed(0)} ms; bare node:http ${startup('node').toFixed(0)} ms`,
    });

    process.stderr.write('bench: http: relay start-up…\n');
    const relayRuns = await measureRelayStartup({
      serviceUrl: `http://127.0.0.1:${ourPort}/mcp`,
      tokenFile: fixture.tokenFile,
      runs: 15,
    });
    const sorted = [...relayRuns].sort((x, y) => x - y);
    const relayMedian = median(sorted);
    lines.push({
      name: 'relay: process start to first reply (median of 15)',
      value: relayMedian,
      unit: 'ms',
      target: '<= 150',
      ok: relayMedian <= 150,
      note: `min ${(sorted[0] ?? NaN).toFixed(0)}, max ${(sorted[sorted.length - 1] ?? NaN).toFixed(0)} ms`,
    });
  } finally {
    for (const s of started.values()) await s.stop();
    await fixture.close();
  }
  return lines;
}
