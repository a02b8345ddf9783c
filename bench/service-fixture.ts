/**
 * A live service for the benchmarks: the embedded chain as its own process, one funded key, a token, a config
 * file, and `sa-forge-signer-serve` started from dist/ with the time to its first answered request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { createKeyFile } from '../src/keys/keyfile';
import { newToken, tokenSha256 } from '../src/http/bearer-tokens';

const CLI = path.resolve(__dirname, '../src/cli');
export const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

export interface Fixture {
  dir: string;
  token: string;
  tokenFile: string;
  tokenSha256: string;
  configFile: string;
  close(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  // A child ended by a signal has a signalCode and no exitCode: either way its exit event has fired.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** The embedded chain as its own process (`sa-forge-signer localnet`), with its announced URL. */
export async function startChainProcess(
  fund: { address: string; lamports: number }[],
  blockMs?: number,
  confirmBlocks?: number,
): Promise<{ url: string; stop(): Promise<void> }> {
  const args = [
    path.join(CLI, 'signer.js'),
    'localnet',
    '--listen',
    '127.0.0.1:0',
    ...(blockMs === undefined ? [] : ['--block-ms', String(blockMs)]),
    ...(confirmBlocks === undefined ? [] : ['--confirm-blocks', String(confirmBlocks)]),
  ];
  const child = spawn(process.execPath, [...args, ...fund.flatMap((f) => ['--fund', `${f.address}=${f.lamports}`])], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`localnet exited with ${code}`)));
  });
  return { url, stop: () => stop(child) };
}

/** The chain process, a key, a token and a config (log_level as a production default would have it). */
export async function makeFixture(opts: { port: number; logLevel?: string }): Promise<Fixture> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-service-'));
  const pubkey = createKeyFile(path.join(dir, 'keys'), 'demo');
  const chain = await startChainProcess([{ address: pubkey, lamports: 1_000_000_000_000 }]);
  const token = newToken();
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, token, { mode: 0o600 });
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    configFile,
    YAML.stringify({
      cluster: 'local',
      rpc_url: chain.url,
      key_dir: 'keys',
      state_dir: 'state',
      log_level: opts.logLevel ?? 'info',
      keys: { demo: { class: 'session', pubkey } },
      serve: {
        listen: `127.0.0.1:${opts.port}`,
        allowed_hosts: ['127.0.0.1', 'localhost'],
        metrics: '127.0.0.1:0', // on, as by default: its request counter is part of the stack
        // The load is one token: keep the per-token rate limit in the path but above what the load generator sends.
        rate_limit_per_minute: 100_000_000,
        tokens: [{ name: 'bench', sha256: tokenSha256(token), keys: ['demo'] }],
      },
    }),
    { mode: 0o600 },
  );
  return {
    dir,
    token,
    tokenFile,
    tokenSha256: tokenSha256(token),
    configFile,
    async close() {
      await chain.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function post(
  port: number,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface Started {
  child: ChildProcess;
  startupMs: number;
  firstBody: Buffer;
  stop(): Promise<void>;
}

/** Spawns a server and times process start → first 200 answer to the probe request (polling every 2 ms). */
export async function startTimed(
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  probe: { headers: Record<string, string>; body: string },
): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    try {
      const r = await post(port, probe.headers, probe.body);
      if (r.status === 200)
        return { child, startupMs: performance.now() - t0, firstBody: r.body, stop: () => stop(child) };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

export function rssMiB(pid: number): { rss: number; hwm: number } {
  const t = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}
