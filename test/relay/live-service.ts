/**
 * A live signer service for the relay tests, built from real parts: the embedded chain (LiteSVM behind its
 * JSON-RPC endpoint) in the test process, key files, a SQLite ledger, a bearer token whose sha256 is in the
 * config, and `sa-forge-signer-serve --config …` (the built dist/) as its own process on a loopback port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKeyFile } from '../../src/keys/keyfile';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { assertBuilt, BIN, ROOT, run, writeYaml, type RunResult } from '../support/cli';
import { payload, randomAddress, transferInstruction } from '../support/payloads';
import { killOnExit } from '../support/children';
import { PROCESS_TIMINGS } from '../support/world';

export interface KeySpec {
  approval?: 'auto' | 'confirm';
}

export interface LiveServiceOptions {
  keys: Record<string, KeySpec>;
  /**
   * Runs once the chain is up and the keys exist, before the service starts; what it returns is merged into each
   * named key's config (e.g. settings naming accounts the hook created on the chain).
   */
  prepare?: (
    localnet: Localnet,
    keys: Record<string, { pubkey: string; destination: string }>,
  ) => Promise<Record<string, Record<string, unknown>>>;
  /** Extra `serve:` settings (e.g. param_headers). */
  serve?: Record<string, unknown>;
  timings?: Record<string, number>;
}

/** Approvals wait long enough for a test to act while a sign is held. */
const TEST_TIMINGS = { ...PROCESS_TIMINGS, approval_timeout_ms: 60_000 };

export class LiveService {
  child: ChildProcess | null = null;
  url = '';
  private tail = '';

  private constructor(
    readonly dir: string,
    readonly localnet: Localnet,
    readonly configFile: string,
    readonly token: string,
    readonly tokenFile: string,
    readonly keys: Record<string, { pubkey: string; destination: string }>,
    private readonly doc: Record<string, unknown>,
  ) {}

  static async start(opts: LiveServiceOptions): Promise<LiveService> {
    assertBuilt(BIN.serve, BIN.signer, BIN.mcp);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-relay-'));
    const keyDir = path.join(dir, 'keys');
    const keys: Record<string, { pubkey: string; destination: string }> = {};
    for (const name of Object.keys(opts.keys))
      keys[name] = { pubkey: createKeyFile(keyDir, name), destination: randomAddress() };
    const localnet = await startLocalnet({
      port: 0,
      blockIntervalMs: 20,
      fund: Object.values(keys).map((k) => ({ address: k.pubkey, lamports: 100_000_000_000 })),
    });
    let extras: Record<string, Record<string, unknown>> = {};
    try {
      extras = opts.prepare ? await opts.prepare(localnet, keys) : {};
    } catch (e) {
      await localnet.close();
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    const token = newToken();
    const tokenFile = path.join(dir, 'agent.token');
    fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const doc: Record<string, unknown> = {
      cluster: 'local',
      rpc_url: localnet.url,
      key_dir: keyDir,
      state_dir: path.join(dir, 'state'),
      ledger: { store: 'sqlite', path: path.join(dir, 'state', 'ledger.sqlite') },
      log_level: 'warn',
      timings: { ...TEST_TIMINGS, ...opts.timings },
      keys: Object.fromEntries(
        Object.entries(opts.keys).map(([name, spec]) => [
          name,
          {
            class: 'session',
            pubkey: keys[name]!.pubkey,
            approval: spec.approval ?? 'auto',
            transfer_to: [keys[name]!.destination],
            rate_limit_per_minute: 10_000,
            daily_lamport_cap: 100_000_000_000,
            ...extras[name],
          },
        ]),
      ),
      serve: {
        listen: '127.0.0.1:0',
        tokens: [{ name: 'agent', sha256: tokenSha256(token), keys: Object.keys(opts.keys) }],
        rate_limit_per_minute: 1_000_000,
        drain_ms: 1_000,
        metrics: null,
        ...opts.serve,
      },
    };
    const configFile = path.join(dir, 'config.yaml');
    writeYaml(configFile, doc);
    const service = new LiveService(dir, localnet, configFile, token, tokenFile, keys, doc);
    try {
      await service.spawn();
    } catch (e) {
      await service.close();
      throw e;
    }
    return service;
  }

  /** Starts the service process and resolves once it announced its address. */
  async spawn(): Promise<void> {
    const child = spawn(process.execPath, [BIN.serve, '--config', this.configFile], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    killOnExit(child);
    this.child = child;
    this.tail = '';
    const address = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the service did not start: ${this.tail}`)), 30_000);
      child.stderr.on('data', (d: Buffer) => {
        this.tail = (this.tail + d.toString()).slice(-8192);
        const m = /serving on (\S+)/.exec(this.tail);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the service exited (${code}) while starting: ${this.tail}`));
      });
    });
    this.url = `http://${address}/mcp`;
  }

  /** Stops the service process (SIGKILL: the tests only need it gone) and waits until it is reaped. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** Restarts the service on the same port with changed `serve:` settings. */
  async restart(serve: Record<string, unknown>): Promise<void> {
    const port = new URL(this.url).port;
    await this.stop();
    this.doc.serve = { ...(this.doc.serve as Record<string, unknown>), ...serve, listen: `127.0.0.1:${port}` };
    writeYaml(this.configFile, this.doc);
    await this.spawn();
  }

  stderr(): string {
    return this.tail;
  }

  /** The operator CLI on the same config (same ledger). */
  cli(args: string[]): Promise<RunResult> {
    return run(BIN.signer, ['--config', this.configFile, ...args]);
  }

  /** Ids of the signs waiting for an operator, from `sa-forge-signer approvals list`. */
  async pendingApprovals(): Promise<string[]> {
    const r = await this.cli(['approvals', 'list']);
    if (r.code !== 0) throw new Error(`approvals list failed (${r.code}): ${r.stderr}`);
    return [...r.stdout.matchAll(/^(\S+)\s+key /gm)].map((m) => m[1]!);
  }

  /** A payload moving `lamports` from a key to its allowed destination. */
  transfer(key: string, lamports: number, summary = `transfer by ${key}`): Record<string, unknown> {
    const k = this.keys[key]!;
    return payload(k.pubkey, [transferInstruction(k.pubkey, k.destination, lamports)], { summary });
  }

  async close(): Promise<void> {
    await this.stop().catch(() => undefined);
    await this.localnet.close().catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls `check` until it holds, or fails naming `what`. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
