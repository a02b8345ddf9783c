/**
 * Relay start-up: from spawning `node dist/src/cli/mcp.js` to the first reply line on its stdout, for a
 * `server/discover` written to its stdin at once (as an MCP client does right after launching it). Each run is a
 * fresh process against a service already running at `serviceUrl`. Target: ≤ 150 ms.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const RELAY = path.resolve(__dirname, '../src/cli/mcp.js');
const DISCOVER = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
})}\n`;

function once(serviceUrl: string, tokenFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [RELAY], {
      env: { PATH: process.env.PATH ?? '', SIGNER_URL: serviceUrl, SIGNER_TOKEN_FILE: tokenFile },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes('\n')) return;
      const ms = performance.now() - started;
      const reply = JSON.parse(out.slice(0, out.indexOf('\n'))) as {
        result?: { supportedVersions?: string[] };
        error?: { message: string };
      };
      child.stdin.end();
      if (!reply.result?.supportedVersions)
        reject(new Error(`the relay did not relay discover: ${reply.error?.message ?? out}`));
      else child.once('exit', () => resolve(ms));
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (!out.includes('\n')) reject(new Error(`the relay exited (${code}) without a reply: ${err}`));
    });
    child.stdin.write(DISCOVER);
  });
}

/** Milliseconds from process start to the first reply, one per run (runs are sequential). */
export async function measureRelayStartup(opts: {
  serviceUrl: string;
  tokenFile: string;
  runs: number;
}): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < opts.runs; i++) times.push(await once(opts.serviceUrl, opts.tokenFile));
  return times;
}
