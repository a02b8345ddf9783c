/**
 * A halt outlives `npm start`'s fresh ledger, with real processes: the embedded default (`sa-forge-signer-serve
 * --local`) is halted through the CLI, stopped and started again. The new ledger holds the halt as it was (who,
 * when, why) with an entry naming the archived run it came from, the running service refuses the key, and only an
 * operator's `resume` releases it. A halt the ledger could not record (held in the state directory) survives the
 * restart the same way.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import YAML from 'yaml';
import { openLedger } from '../../src/ledger/open';
import type { AuditEntry, HaltRecord } from '../../src/ledger/types';
import { HELD_HALTS_FILE } from '../../src/signer/held-halts-file';
import { transferPayload } from '../../src/signer/transfer';
import { until } from '../support/async';
import { killOnExit, stopChild } from '../support/children';
import { BIN, assertBuilt, listeningAddress, run, spawnBin, waitForOutput } from '../support/cli';
import { freePort } from '../support/ports';
import { McpHttpClient } from '../replicas/mcp-http';

let dir: string;
let varDir: string;
let env: NodeJS.ProcessEnv;
let service: ChildProcess | null = null;
let address: string;

const stateDir = (): string => path.join(varDir, 'state');
const ledgerFile = (): string => path.join(stateDir(), 'ledger.sqlite');
const cli = (args: string[]) => run(BIN.signer, ['--config', path.join(varDir, 'config.yaml'), ...args], { env });

/**
 * `npm start`: the service on the var dir, once it answers /ready (its engine open) and, on first contact, once
 * its demo sign is over.
 */
async function start(opts: { demo?: boolean } = {}): Promise<string> {
  const child = spawnBin(BIN.serve, ['--local'], env);
  killOnExit(child);
  service = child;
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const demoDone = opts.demo === true ? waitForOutput(child, /demo: sign → \w+/, 'stdout', 60_000) : null;
  address = await listeningAddress(child, 60_000);
  await until(async () => (await fetch(`http://${address}/ready`)).status === 200, 'the service ready', 60_000, 50);
  await demoDone;
  return log;
}

async function stop(): Promise<void> {
  if (service) await stopChild(service, 'SIGTERM');
  service = null;
}

async function readLedger<T>(file: string, fn: (l: Awaited<ReturnType<typeof openLedger>>) => Promise<T>) {
  const ledger = await openLedger({ store: 'sqlite', path: file });
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

const entriesOf = (file: string): Promise<AuditEntry[]> =>
  readLedger(file, async (l) => {
    const all: AuditEntry[] = [];
    for await (const e of l.entries()) all.push(e);
    return all;
  });

/** The run a start moved aside: the newest folder under state/previous-runs/. */
function newestArchive(): string {
  const runs = path.join(stateDir(), 'previous-runs');
  const newest = fs.readdirSync(runs).sort().at(-1)!;
  return path.join(runs, newest, 'ledger.sqlite');
}

/** A tool call on the demo key through the running service's MCP endpoint, as an agent sends it. */
async function callTool(name: 'sign' | 'halt', args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const token = fs.readFileSync(path.join(varDir, 'token'), 'utf8').trim();
  const reply = await new McpHttpClient(`http://${address}`, token).tool(name, { key: 'demo', ...args });
  if (reply.structured === null) throw new Error(`${name}: no structured result: ${reply.text}`);
  return reply.structured;
}

function signThroughService(): Promise<Record<string, unknown>> {
  const cfg = YAML.parse(fs.readFileSync(path.join(varDir, 'config.yaml'), 'utf8')) as {
    keys: { demo: { pubkey: string; transfer_to: string[] } };
  };
  const payload = transferPayload({
    from: cfg.keys.demo.pubkey,
    to: cfg.keys.demo.transfer_to[0]!,
    lamports: 1_000_000, // at least the rent a new destination account needs
    summary: 'after a restart',
  });
  return callTool('sign', { payload });
}

/** `key show demo --json`'s halt. */
async function shownHalt(): Promise<HaltRecord | null> {
  const shown = await cli(['key', 'show', 'demo', '--json']);
  expect(shown.code).toBe(0);
  return (JSON.parse(shown.stdout) as { halted: HaltRecord | null }).halted;
}

beforeAll(() => {
  assertBuilt(BIN.serve, BIN.signer);
});

// Each test on its own var dir, as a fresh clone's `npm start` makes it.
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'local-halt-carry-'));
  varDir = path.join(dir, 'var');
  env = {
    SIGNER_VAR_DIR: varDir,
    SIGNER_LISTEN: '127.0.0.1:0',
    SIGNER_METRICS_LISTEN: '127.0.0.1:0',
    SIGNER_OPERATOR_LISTEN: '127.0.0.1:0',
    SIGNER_RPC_URL: `http://127.0.0.1:${String(await freePort())}`,
    SIGNER_LOG_PRETTY: '0',
  };
});

afterEach(async () => {
  if (service) await stopChild(service, 'SIGKILL');
  service = null;
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a halted key is still halted after a restart, until an operator resumes it', async () => {
  await start({ demo: true });
  const halted = await cli(['halt', 'demo', '--reason', 'runaway agent']);
  expect(halted.code).toBe(0);
  const before = await shownHalt();
  expect(before).toMatchObject({ key: 'demo', reason: 'runaway agent', by: 'operator' });
  await stop();

  const log = await start();
  const archive = newestArchive();

  // The halt as it was: key show, the gate of the running service.
  expect(await shownHalt()).toEqual(before);
  expect(log).toContain(`the previous run's ledger is now ${archive}`);
  expect(log).toContain('halts carried over to the fresh ledger: demo');
  expect(await signThroughService()).toMatchObject({ outcome: 'refused', failed_check: 'halted' });

  // The new chain opens with the halt (the refused sign follows it) and says where it came from.
  const fresh = await entriesOf(ledgerFile());
  expect(fresh.map((e) => `${e.command}:${e.key}:${e.outcome}`)).toEqual(['halt:demo:halted', 'sign:demo:refused']);
  expect(fresh[0]).toMatchObject({ ts: before!.ts, summary: 'runaway agent' });
  expect(fresh[0]!.detail).toBe(
    `by operator; carried over from the archived ledger ${path.relative(stateDir(), archive)}`,
  );
  expect(await readLedger(ledgerFile(), (l) => l.verify())).toEqual({ ok: true, entries: 2 });
  // The archive keeps its own record of the halt.
  expect(await readLedger(archive, (l) => l.getHalt('demo'))).toEqual(before);

  // An operator's resume releases it.
  const resumed = await cli(['resume', 'demo']);
  expect(resumed.stderr).toContain('resumed demo: signing is allowed again');
  expect(await shownHalt()).toBeNull();
  expect(await signThroughService()).toMatchObject({ outcome: 'confirmed' });
  await stop();
}, 180_000);

test('a halt held in the state directory because the ledger was locked survives the restart too', async () => {
  await start({ demo: true });
  // Another process holds the ledger's write lock while the agent halts the key: the service holds the halt (and
  // keeps it in the state directory), and is stopped before the ledger could take it.
  const blocker = new Database(ledgerFile());
  blocker.exec('BEGIN IMMEDIATE');
  try {
    const halted = await callTool('halt', { reason: 'halted while the ledger was locked' });
    expect(halted).toMatchObject({ halted: [], not_recorded: [{ key: 'demo' }] });
    expect(fs.existsSync(path.join(stateDir(), HELD_HALTS_FILE))).toBe(true);
    await stop();
  } finally {
    blocker.exec('ROLLBACK');
    blocker.close();
  }
  expect(await readLedger(ledgerFile(), (l) => l.getHalt('demo'))).toBeNull();

  await start();
  const carried = { key: 'demo', reason: 'halted while the ledger was locked', by: 'token:local' };
  expect(await shownHalt()).toMatchObject(carried);
  expect(await signThroughService()).toMatchObject({ outcome: 'refused', failed_check: 'halted' });
  expect(fs.existsSync(path.join(stateDir(), HELD_HALTS_FILE))).toBe(false);
  // The archive never recorded it (its ledger was locked); the new ledger has it, once, as the agent's halt.
  expect(await readLedger(newestArchive(), (l) => l.getHalt('demo'))).toBeNull();
  const fresh = await entriesOf(ledgerFile());
  expect(fresh.map((e) => `${e.command}:${e.key}:${e.outcome}`)).toEqual(['halt:demo:halted', 'sign:demo:refused']);
  expect(fresh[0]!.detail).toBe('by token:local');

  // From then on it is a recorded halt: the next restart carries it over, and only a resume lifts it.
  await stop();
  await start();
  expect(await shownHalt()).toMatchObject(carried);
  const resumed = await cli(['resume', 'demo']);
  expect(resumed.stderr).toContain('resumed demo: signing is allowed again');
  expect(await shownHalt()).toBeNull();
  await stop();
}, 180_000);
