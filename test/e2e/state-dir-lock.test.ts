/**
 * One service per state directory, with real processes: the embedded default (`sa-forge-signer-serve --local`,
 * what `npm start` runs) twice on one var dir with moved ports. The second refuses and names the first; the first
 * keeps its ledger, so a halt through the CLI stops its signs; a start on a busy port moves nothing.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { openLedger } from '../../src/ledger/open';
import { transferPayload } from '../../src/signer/transfer';
import { killOnExit, stopChild } from '../support/children';
import { BIN, assertBuilt, listeningAddress, run, spawnBin, waitForOutput } from '../support/cli';
import { freePort } from '../support/ports';

let dir: string;
let varDir: string;
let first: ChildProcess;
let address: string;
let env: NodeJS.ProcessEnv;

const ledgerFile = (): string => path.join(varDir, 'state', 'ledger.sqlite');
const cli = (args: string[]) => run(BIN.signer, ['--config', path.join(varDir, 'config.yaml'), ...args], { env });

async function entries(): Promise<number> {
  const ledger = await openLedger({ store: 'sqlite', path: ledgerFile() });
  try {
    const v = await ledger.verify();
    if (!v.ok) throw new Error(`ledger broken: ${v.reason}`);
    return v.entries;
  } finally {
    await ledger.close();
  }
}

/** A sign through the running service's MCP endpoint, as an agent sends it. */
async function signThroughService(): Promise<{ outcome: string; failed_check: string | null; detail: string | null }> {
  const cfg = YAML.parse(fs.readFileSync(path.join(varDir, 'config.yaml'), 'utf8')) as {
    keys: { demo: { pubkey: string; transfer_to: string[] } };
  };
  const demo = cfg.keys.demo;
  const payload = transferPayload({
    from: demo.pubkey,
    to: demo.transfer_to[0]!,
    lamports: 1000,
    summary: 'after halt',
  });
  const token = fs.readFileSync(path.join(varDir, 'token'), 'utf8').trim();
  const res = await fetch(`http://${address}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'sign',
      'mcp-param-key': 'demo',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'sign',
        arguments: { key: 'demo', payload },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const reply = (await res.json()) as {
    result: { structuredContent: { outcome: string; failed_check: string | null; detail: string | null } };
  };
  return reply.result.structuredContent;
}

beforeAll(async () => {
  assertBuilt(BIN.serve, BIN.signer);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'state-dir-lock-'));
  varDir = path.join(dir, 'var');
  env = {
    SIGNER_VAR_DIR: varDir,
    SIGNER_LISTEN: '127.0.0.1:0',
    SIGNER_METRICS_LISTEN: '127.0.0.1:0',
    SIGNER_OPERATOR_LISTEN: '127.0.0.1:0',
    SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}`,
    SIGNER_LOG_PRETTY: '0',
  };
  first = spawnBin(BIN.serve, ['--local'], env);
  killOnExit(first);
  const demoDone = waitForOutput(first, /demo: sign → \w+/, 'stdout', 60_000);
  address = await listeningAddress(first, 60_000);
  await demoDone;
}, 90_000);

afterAll(async () => {
  await stopChild(first, 'SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a second service on the same state directory refuses, names the first, and moves no ledger', async () => {
  const before = await entries();
  // Moved ports, as a second `npm start` in the same checkout would have them.
  const second = await run(BIN.serve, ['--local'], {
    env: { ...env, SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}` },
  });
  expect(second.code).toBe(1);
  expect(second.stderr).toContain(`belongs to sa-forge-signer pid ${String(first.pid)} (listening on ${address}`);
  expect(second.stderr).toMatch(/give this service its own state_dir/);
  expect(fs.existsSync(ledgerFile())).toBe(true);
  expect(fs.existsSync(path.join(varDir, 'state', 'previous-runs'))).toBe(false);
  expect(await entries()).toBe(before);
}, 60_000);

test('a bare SIGHUP reloads: the answer is in the log and in the result file', async () => {
  const file = path.join(varDir, 'config.yaml');
  const doc = YAML.parse(fs.readFileSync(file, 'utf8')) as { keys: { demo: Record<string, unknown> } };
  doc.keys.demo.daily_lamport_cap = 2_000_000_000;
  fs.writeFileSync(file, YAML.stringify(doc), { mode: 0o600 });
  const logged = waitForOutput(
    first,
    /reload: policy \w{64} applied: keys\.demo\.daily_lamport_cap 1000000000 → 2000000000/,
  );
  process.kill(first.pid!, 'SIGHUP');
  await logged;
  const answer = JSON.parse(fs.readFileSync(path.join(varDir, 'state', 'reload-result.json'), 'utf8')) as {
    status: string;
    request: string | null;
  };
  expect(answer).toMatchObject({ status: 'applied', request: null });
}, 60_000);

test('a halt through the CLI stops signs on the running service', async () => {
  const halted = await cli(['halt', 'demo', '--reason', 'state-dir test']);
  expect(halted.code).toBe(0);
  const report = await signThroughService();
  expect(report.outcome).toBe('refused');
  expect(report.failed_check).toBe('halted');
}, 60_000);

test('a start on a busy port changes nothing on disk and names the setting to change', async () => {
  await stopChild(first, 'SIGTERM');
  const before = await entries();
  const size = fs.statSync(ledgerFile()).size;
  const busy = net.createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = (busy.address() as net.AddressInfo).port;
  try {
    const r = await run(BIN.serve, ['--local'], { env: { ...env, SIGNER_LISTEN: `127.0.0.1:${String(port)}` } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `the MCP endpoint cannot listen on 127.0.0.1:${String(port)}: the address is already in use`,
    );
    expect(r.stderr).toMatch(/SIGNER_LISTEN=HOST:PORT/);
  } finally {
    busy.close();
  }
  expect(fs.existsSync(path.join(varDir, 'state', 'previous-runs'))).toBe(false);
  expect(fs.statSync(ledgerFile()).size).toBe(size);
  expect(await entries()).toBe(before);
  // The state directory is free again: the failed start left no holder behind.
  expect(fs.existsSync(path.join(varDir, 'state', 'service.json'))).toBe(false);
}, 60_000);
