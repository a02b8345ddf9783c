/**
 * A real several-replica deployment on loopback for the replica tests:
 * - a fresh PostgreSQL database on the machine's server, reached through a TCP relay the test can cut and restore
 *   (the shared server itself stays up for everyone else);
 * - the embedded chain (LiteSVM behind its JSON-RPC endpoint) in the test process, so its faults and counters are
 *   at hand;
 * - key files, a bearer token and one config file with `ledger: { store: postgres, url }`;
 * - N `sa-forge-signer-serve --config …` processes (the built dist/), each on its own loopback port.
 *
 * close() kills every replica, stops the chain and the relay and drops the database, whatever state a failed test
 * left them in; a process exit handler kills replicas that would otherwise outlive a crashed test worker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createKeyFile } from '../../src/keys/keyfile';
import { rpcResult } from '../support/rpc';
import { newToken, tokenSha256 } from '../../src/http/bearer-tokens';
import type { AuditEntry } from '../../src/ledger/types';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { assertBuilt, BIN, ROOT, run, writeYaml, type RunResult } from '../support/cli';
import { randomAddress, transferInstruction, payload } from '../support/payloads';
import { killOnExit } from '../support/children';
import { PROCESS_TIMINGS } from '../support/world';
import { PG_HOST, PG_PORT, createDatabase, dbUrl, dropDatabase } from '../ledger/pg';
import { TcpProxy } from '../ledger/tcp-proxy';
import { McpHttpClient } from './mcp-http';

export interface ReplicaKeySpec {
  approval?: 'auto' | 'confirm';
  daily_lamport_cap?: number;
  rate_limit_per_minute?: number;
  /** Dollar caps as the config writes them (`per_day: "2.16"`); the cluster's `prices` must price what they value. */
  usd?: { per_tx?: string; per_day?: string; approve_above?: string };
}

export interface ClusterOptions {
  keys: Record<string, ReplicaKeySpec>;
  replicas?: number;
  blockIntervalMs?: number;
  /** Blocks after landing until `confirmed` (the localnet's default 1; a real cluster about 2). */
  confirmAfterBlocks?: number;
  timings?: Record<string, number>;
  /** The config's `prices` section as written (`{ feeds: [{ asset, account, feed_id }] }`); absent: none. */
  prices?: Record<string, unknown>;
  /** How the config names the database: inline `ledger.url` (default) or `ledger.url_file` (a mounted secret). */
  urlFrom?: 'url' | 'url_file';
  /** A database of the test's own (e.g. a primary and standby, bench/pg-pair.ts) instead of a fresh one on the machine's
   *  server behind the relay; `readUrl` names the server the test's own reads go to (the primary now). */
  ledger?: { url: string; readUrl: () => string };
  /** `serve.credentials` as the config states it (docs/credentials.md): a root key file and the issued roots. */
  credentials?: { root_key_file: string; issued: { name: string; revocation_id: string; keys: string[] }[] };
}

export interface Replica {
  index: number;
  child: ChildProcess;
  url: string;
  mcp: McpHttpClient;
  /** The last 8 kB of the replica's stderr, for failure messages. */
  stderr(): string;
  exited: Promise<number | null>;
}

/** The tests read one replica's writes through another's key_show at once: no display cache. */
const TEST_TIMINGS = { ...PROCESS_TIMINGS };

export class ReplicaCluster {
  readonly replicas: Replica[] = [];
  readonly keys: Record<string, { pubkey: string; destination: string }> = {};
  private constructor(
    readonly dir: string,
    readonly db: string,
    readonly proxy: TcpProxy,
    readonly localnet: Localnet,
    readonly configFile: string,
    readonly token: string,
    private readonly readUrl: () => string,
  ) {}

  static async start(opts: ClusterOptions): Promise<ReplicaCluster> {
    assertBuilt(BIN.serve, BIN.signer);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-replicas-'));
    const parts: { db?: string; proxy?: TcpProxy; localnet?: Localnet } = {};
    try {
      parts.db = opts.ledger ? '' : await createDatabase();
      parts.proxy = new TcpProxy({ host: PG_HOST, port: PG_PORT });
      const proxyPort = await parts.proxy.start();
      const keyDir = path.join(dir, 'keys');
      const keys: Record<string, { pubkey: string; destination: string }> = {};
      for (const name of Object.keys(opts.keys))
        keys[name] = { pubkey: createKeyFile(keyDir, name), destination: randomAddress() };
      parts.localnet = await startLocalnet({
        port: 0,
        blockIntervalMs: opts.blockIntervalMs ?? 20,
        confirmAfterBlocks: opts.confirmAfterBlocks,
        fund: Object.values(keys).map((k) => ({ address: k.pubkey, lamports: 1_000_000_000_000 })),
      });
      const token = newToken();
      const configFile = path.join(dir, 'config.yaml');
      const url = opts.ledger?.url ?? dbUrl(parts.db, proxyPort);
      let ledgerSource: Record<string, string> = { url };
      if (opts.urlFrom === 'url_file') {
        const secret = path.join(dir, 'ledger-url');
        fs.writeFileSync(secret, `${url}\n`, { mode: 0o600 });
        ledgerSource = { url_file: secret };
      }
      writeYaml(configFile, {
        cluster: 'local',
        rpc_url: parts.localnet.url,
        key_dir: keyDir,
        state_dir: path.join(dir, 'state'),
        ledger: { store: 'postgres', ...ledgerSource, pool_size: 10 },
        log_level: 'warn',
        ...(opts.prices === undefined ? {} : { prices: opts.prices }),
        timings: { ...TEST_TIMINGS, ...opts.timings },
        keys: Object.fromEntries(
          Object.entries(opts.keys).map(([name, spec]) => [
            name,
            {
              class: 'session',
              pubkey: keys[name]!.pubkey,
              approval: spec.approval ?? 'auto',
              transfer_to: [keys[name]!.destination],
              rate_limit_per_minute: spec.rate_limit_per_minute ?? 10_000,
              daily_lamport_cap: spec.daily_lamport_cap ?? 100_000_000_000,
              ...(spec.usd === undefined ? {} : { usd: spec.usd }),
            },
          ]),
        ),
        serve: {
          listen: '127.0.0.1:0',
          tokens: [{ name: 'agent', sha256: tokenSha256(token), keys: Object.keys(opts.keys) }],
          // Room for every concurrent request of the tests: the limits under test are the ledger's, not HTTP's.
          max_in_flight: 512,
          max_in_flight_per_token: 512,
          rate_limit_per_minute: 1_000_000,
          drain_ms: 1_000,
          metrics: null,
          ...(opts.credentials ? { credentials: opts.credentials } : {}),
        },
      });
      const db = parts.db;
      const cluster = new ReplicaCluster(
        dir,
        db,
        parts.proxy,
        parts.localnet,
        configFile,
        token,
        opts.ledger?.readUrl ?? (() => dbUrl(db)),
      );
      Object.assign(cluster.keys, keys);
      // Started together: both run the schema migrations at once, as a rolling deploy would.
      const started = await Promise.allSettled(
        Array.from({ length: opts.replicas ?? 2 }, (_, i) => cluster.spawnReplica(i)),
      );
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) {
        await cluster.close();
        throw failed.reason;
      }
      return cluster;
    } catch (e) {
      await parts.localnet?.close().catch(() => undefined);
      await parts.proxy?.close().catch(() => undefined);
      if (parts.db !== undefined && parts.db !== '') await dropDatabase(parts.db).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Starts replica `index` (again, after a kill) and waits until it answers /ready with 200. */
  async spawnReplica(index: number): Promise<Replica> {
    const child = spawn(process.execPath, [BIN.serve, '--config', this.configFile], {
      cwd: ROOT,
      // One state directory per replica, as each container has its own: a service holds its state directory.
      env: { ...process.env, SIGNER_STATE_DIR: path.join(this.dir, `state-${String(index)}`) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    killOnExit(child);
    let tail = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`replica ${index} did not start: ${tail}`)), 30_000);
      child.stderr.on('data', (d: Buffer) => {
        tail = (tail + d.toString()).slice(-65_536); // room for a failover's log lines (failover.test.ts)
        const m = /serving on (\S+)/.exec(tail);
        if (m) {
          clearTimeout(timer);
          resolve(`http://${m[1]}`);
        }
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`replica ${index} exited (${code}) while starting: ${tail}`));
      });
    });
    const replica: Replica = { index, child, url, mcp: new McpHttpClient(url, this.token), stderr: () => tail, exited };
    this.replicas[index] = replica;
    await waitFor(async () => (await replica.mcp.ready()) === 200, 30_000, `replica ${index} ready`);
    return replica;
  }

  /** kill -9, and wait until the process is reaped. */
  async kill(index: number): Promise<void> {
    const r = this.replicas[index]!;
    r.child.kill('SIGKILL');
    await r.exited;
  }

  /** The operator CLI on the same config (so on the same database, through the relay). */
  cli(args: string[]): Promise<RunResult> {
    return run(BIN.signer, ['--config', this.configFile, ...args]);
  }

  /** A payload moving `lamports` from a key to its allowed destination. */
  transfer(key: string, lamports: number, summary = `transfer by ${key}`): Record<string, unknown> {
    const k = this.keys[key]!;
    return payload(k.pubkey, [transferInstruction(k.pubkey, k.destination, lamports)], { summary });
  }

  /** Audit entries read straight from the database (not through the relay, so they can be read while it is cut). */
  async entries(key?: string): Promise<AuditEntry[]> {
    const c = new Client({ connectionString: this.readUrl() });
    await c.connect();
    try {
      const res = key
        ? await c.query('SELECT * FROM entries WHERE key = $1 ORDER BY seq', [key])
        : await c.query('SELECT * FROM entries ORDER BY seq');
      return res.rows.map((r: Record<string, unknown>) => ({
        ...(r as unknown as AuditEntry),
        ts: Number(r.ts),
        balance_change: r.balance_change === null ? null : Number(r.balance_change),
        slot: r.slot === null ? null : Number(r.slot),
      }));
    } finally {
      await c.end();
    }
  }

  async balance(address: string): Promise<number> {
    const r = await rpcResult<{ value: number }>(this.localnet.url, 'getBalance', [
      address,
      { commitment: 'confirmed' },
    ]);
    return r.value;
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      this.replicas.filter(Boolean).map(async (r) => {
        r.child.kill('SIGKILL');
        await r.exited;
      }),
    );
    await Promise.allSettled([this.localnet.close(), this.proxy.close()]);
    if (this.db !== '') await dropDatabase(this.db);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** For afterAll: clears the chain's faults and closes the cluster, if it started. */
export async function closeCluster(cluster: ReplicaCluster | undefined): Promise<void> {
  if (!cluster) return;
  cluster.localnet.faults.clear();
  await cluster.close();
}

/** Polls `cond` until it holds; fails naming `what` after `ms`. */
export async function waitFor(
  cond: () => Promise<boolean> | boolean,
  ms: number,
  what: string,
  everyMs = 25,
): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown = null;
  for (;;) {
    try {
      if (await cond()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : last === null ? '' : `: ${JSON.stringify(last)}`}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const uniqueSummary = (tag: string): string => `${tag} ${crypto.randomBytes(4).toString('hex')}`;
