/**
 * Replicas benchmark: sign/s across 16 keys through the engine with the SQLite ledger, with PostgreSQL and
 * one replica, and with PostgreSQL and two replicas, and what bounds each figure.
 *
 * Every configuration has the same shape: the chain (LiteSVM behind its JSON-RPC endpoint) runs in this process and
 * each replica is a child process of its own (this file, forked with `worker`) holding one engine with its own
 * ledger connections, the way two pods would. Load is 2 signs in flight per key, as concurrent agents would send:
 * one replica runs 32 workers; two replicas run 16 each, one per key, so every key is wanted by both replicas at
 * once and its lock is contended across them (a load balancer spreads an agent's calls over replicas).
 *
 * Besides sign/s each line states: the rate the signs in flight allow at their median latency (a key's lock is held
 * only at the cap gate, so each sign waits for its own confirmation, not for the others'), the CPU of the engines, of
 * the chain process and of the whole machine (2 cores), and for PostgreSQL the transactions (≈ round trips) per sign
 * and the connections open.
 */
import crypto from 'node:crypto';
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { localCluster } from '../src/config/clusters';
import { DEFAULT_TIMINGS, type KeyConfig, type LedgerConfig, type SignerConfig } from '../src/config/types';
import { openEngine } from '../src/signer';
import { transferPayload } from '../src/signer/transfer';
import type { SignerEngine } from '../src/signer/types';
import { percentile, processCpuSeconds, type BenchLine } from './stats';
import { benchConfig, makeBenchKeys } from './engine';

const KEYS = 16;
const IN_FLIGHT_PER_KEY = 2;
const BLOCK_MS = 20; // as in the engine benchmark: confirmation costs one block plus a poll
const POLL_MS = 10;
const PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// ---------------------------------------------------------------------------------------------------- messages

interface WorkerSetup {
  config: SignerConfig;
  /** Key names this replica signs with, each by `workersPerKey` workers. */
  keys: string[];
  workersPerKey: number;
  /** Makes payloads of different replicas differ (distinct signatures). */
  replica: number;
}

type ToWorker = { type: 'setup'; setup: WorkerSetup } | { type: 'go'; ms: number } | { type: 'close' };

interface WorkerResult {
  count: number;
  notConfirmed: number;
  /** Signs before the window (warm-up), for per-sign ratios over the whole run. */
  warmup: number;
  seconds: number;
  latencies: number[];
  cpuMicros: number;
  firstError: string | null;
}

type FromWorker = { type: 'ready' } | { type: 'result'; result: WorkerResult } | { type: 'error'; message: string };

// ---------------------------------------------------------------------------------------------------- worker side

function workerMain(): void {
  const send = (m: FromWorker) => process.send!(m);
  let engine: SignerEngine | null = null;
  let setup: WorkerSetup | null = null;
  const operator = { kind: 'operator' } as const;
  const keyOf = (name: string): KeyConfig => setup!.config.keys.find((k) => k.name === name)!;
  const sign = (name: string, n: number) => {
    const k = keyOf(name);
    return engine!.sign({
      payload: transferPayload({
        from: k.pubkey,
        to: k.transfer_to[0]!,
        lamports: 1_000_000 + n * 4 + setup!.replica,
        summary: 'bench',
      }),
      principal: operator,
    });
  };

  process.on('message', (msg: ToWorker) => {
    void (async () => {
      try {
        if (msg.type === 'setup') {
          setup = msg.setup;
          engine = await openEngine(setup.config);
          // Warm-up: key files loaded, connections open, code hot.
          await Promise.all(setup.keys.map((name, i) => sign(name, 1_000_000 + i)));
          send({ type: 'ready' });
        } else if (msg.type === 'go') {
          const s = setup!;
          const latencies: number[] = [];
          let notConfirmed = 0;
          let firstError: string | null = null;
          const cpu0 = process.cpuUsage();
          const started = performance.now();
          const end = started + msg.ms;
          await Promise.all(
            s.keys.flatMap((name, k) =>
              Array.from({ length: s.workersPerKey }, async (_, w) => {
                for (let i = 0; performance.now() < end; i++) {
                  const t0 = performance.now();
                  try {
                    const r = await sign(name, (i * s.workersPerKey + w) * KEYS + k);
                    if (r.outcome !== 'confirmed') {
                      notConfirmed++;
                      firstError ??= `${r.outcome}: ${r.detail}`;
                    }
                  } catch (e) {
                    notConfirmed++;
                    firstError ??= (e as Error).message;
                  }
                  latencies.push(performance.now() - t0);
                }
              }),
            ),
          );
          const cpu = process.cpuUsage(cpu0);
          send({
            type: 'result',
            result: {
              count: latencies.length,
              notConfirmed,
              warmup: s.keys.length,
              seconds: (performance.now() - started) / 1000,
              latencies,
              cpuMicros: cpu.user + cpu.system,
              firstError,
            },
          });
        } else {
          // msg.type === 'close'
          await engine?.close();
          process.exit(0);
        }
      } catch (e) {
        send({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
      }
    })();
  });
}

// ---------------------------------------------------------------------------------------------------- parent side

class Replica {
  private readonly child: ChildProcess;
  private readonly queue: FromWorker[] = [];
  private waiter: ((m: FromWorker) => void) | null = null;
  private readonly exited: Promise<void>;

  constructor(setup: WorkerSetup) {
    this.child = fork(__filename, ['worker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: FromWorker) => {
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = null;
        w(m);
      } else this.queue.push(m);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
    void this.exited.then(() => this.waiter?.({ type: 'error', message: 'the replica process exited' }));
    this.child.send({ type: 'setup', setup } satisfies ToWorker);
  }

  private async next(): Promise<FromWorker> {
    const m = this.queue.shift() ?? (await new Promise<FromWorker>((resolve) => (this.waiter = resolve)));
    if (m.type === 'error') throw new Error(`replica: ${m.message}`);
    return m;
  }

  async ready(): Promise<void> {
    await this.next();
  }

  async run(ms: number): Promise<WorkerResult> {
    this.child.send({ type: 'go', ms } satisfies ToWorker);
    const m = await this.next();
    if (m.type !== 'result') throw new Error(`replica: unexpected ${m.type}`);
    return m.result;
  }

  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.send({ type: 'close' } satisfies ToWorker);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat), for CPU utilisation in cores. */
function machineCpu(): { busy: number; total: number } {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

async function withAdmin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function pgXacts(db: string): Promise<number> {
  // Backends report their counters when they go idle or exit; the caller reads this after the replicas closed.
  const res = await withAdmin((c) =>
    c.query('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [db]),
  );
  return Number((res.rows[0] as { n: string } | undefined)?.n ?? 0);
}

async function pgBackends(db: string): Promise<number[]> {
  const res = await withAdmin((c) => c.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db]));
  return res.rows.map((r: { pid: number }) => r.pid);
}

/** CPU seconds the PostgreSQL backends of `db` used between two samples (new backends count from their start). */
function backendCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

interface Scenario {
  label: string;
  ledger: (dir: string, db: string | null) => LedgerConfig;
  postgres: boolean;
  replicas: number;
}

interface Measured {
  rate: number;
  count: number;
  notConfirmed: number;
  firstError: string | null;
  p50: number;
  p99: number;
  engineCpuPerSign: number;
  chainCpuPerSign: number;
  machineCores: number;
  /** Cores used by this benchmark's own processes: engines, chain, PostgreSQL backends of its database. */
  oursCores: { engines: number; chain: number; postgres: number | null };
  xactsPerSign: number | null;
  connections: number | null;
}

async function runScenario(
  s: Scenario,
  base: Omit<SignerConfig, 'ledger'>,
  keys: KeyConfig[],
  dir: string,
  ms: number,
): Promise<Measured> {
  const db = s.postgres ? `bench_replicas_${process.pid}_${crypto.randomBytes(3).toString('hex')}` : null;
  if (db) await withAdmin((c) => c.query(`CREATE DATABASE ${db}`));
  const replicas: Replica[] = [];
  try {
    const config: SignerConfig = { ...base, ledger: s.ledger(dir, db) };
    const workersPerKey = IN_FLIGHT_PER_KEY / s.replicas;
    // One replica first, so the schema migrations are not part of what the others wait on.
    for (let i = 0; i < s.replicas; i++) {
      const r = new Replica({ config, keys: keys.map((k) => k.name), workersPerKey, replica: i });
      replicas.push(r);
      if (i === 0) await r.ready();
    }
    await Promise.all(replicas.slice(1).map((r) => r.ready()));

    const backends0 = db ? processCpuSeconds(await pgBackends(db)) : null;
    const machine0 = machineCpu();
    const chain0 = process.cpuUsage();
    const wall0 = performance.now();
    const results = await Promise.all(replicas.map((r) => r.run(ms)));
    const wall = (performance.now() - wall0) / 1000;
    const chainCpu = process.cpuUsage(chain0);
    const machine1 = machineCpu();
    const backendPids = db ? await pgBackends(db) : [];
    const backendCpu = backends0 ? backendCpuBetween(backends0, processCpuSeconds(backendPids)) : null;
    await Promise.all(replicas.map((r) => r.close()));

    const count = results.reduce((a, r) => a + r.count, 0);
    const seconds = Math.max(...results.map((r) => r.seconds));
    const all = results.flatMap((r) => r.latencies);
    let xactsPerSign: number | null = null;
    if (db) {
      await new Promise((r) => setTimeout(r, 200)); // exiting backends flush their counters
      xactsPerSign = (await pgXacts(db)) / (count + results.reduce((a, r) => a + r.warmup, 0));
    }
    return {
      rate: count / seconds,
      count,
      notConfirmed: results.reduce((a, r) => a + r.notConfirmed, 0),
      firstError: results.find((r) => r.firstError)?.firstError ?? null,
      p50: percentile(all, 50),
      p99: percentile(all, 99),
      engineCpuPerSign: results.reduce((a, r) => a + r.cpuMicros, 0) / count,
      chainCpuPerSign: (chainCpu.user + chainCpu.system) / count,
      machineCores: ((machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total)) * os.cpus().length,
      oursCores: {
        engines: results.reduce((a, r) => a + r.cpuMicros, 0) / 1e6 / wall,
        chain: (chainCpu.user + chainCpu.system) / 1e6 / wall,
        postgres: backendCpu === null ? null : backendCpu / wall,
      },
      xactsPerSign,
      connections: db ? backendPids.length : null,
    };
  } finally {
    await Promise.allSettled(replicas.map((r) => r.close()));
    if (db) await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)).catch(() => undefined);
  }
}

/** What bounds the figure, from what was measured. */
function boundNote(s: Scenario, m: Measured): string {
  const cores = os.cpus().length;
  const inFlight = KEYS * IN_FLIGHT_PER_KEY;
  const ours = m.oursCores.engines + m.oursCores.chain + (m.oursCores.postgres ?? 0);
  const cpu =
    `CPU: ours ${ours.toFixed(2)} cores (engines ${m.oursCores.engines.toFixed(2)}, chain ${m.oursCores.chain.toFixed(2)}` +
    `${m.oursCores.postgres !== null ? `, PostgreSQL ${m.oursCores.postgres.toFixed(2)}` : ''}), machine ${m.machineCores.toFixed(2)} of ${cores}`;
  const parts = [
    // Little's law: with a fixed number in flight, the rate is that number over the time each one takes.
    `${inFlight} in flight / p50 latency = ${((inFlight * 1000) / m.p50).toFixed(0)} sign/s`,
    cpu,
    `engine ${(m.engineCpuPerSign / 1000).toFixed(2)} ms CPU/sign`,
    s.postgres
      ? `${m.xactsPerSign!.toFixed(1)} PG transactions (round trips)/sign incl. lock waits, ${m.connections} connections`
      : "2 fsync'd appends/sign",
  ];
  const latency = `confirmation (≥ 1 block of ${BLOCK_MS} ms + poll) plus ${s.postgres ? 'the ledger round trips' : "2 fsync'd appends"}`;
  const bound =
    m.machineCores >= cores * 0.85
      ? `CPU, the machine's ${cores} cores are busy${m.machineCores - ours > 0.3 ? ' (partly with other work)' : ''}`
      : `each sign's own latency with ${inFlight} in flight: ${latency}` +
        (s.replicas > 1 ? ", and each key's lock handed between replicas at the cap gate" : '');
  return `bound: ${bound}; ${parts.join('; ')}${m.notConfirmed ? `; ${m.notConfirmed} NOT CONFIRMED (${m.firstError})` : ''}`;
}

/**
 * What every replica benchmark signs on: 16 bench keys funded on an embedded chain at 20 ms blocks (run by the
 * parent only: the forked replicas never load LiteSVM), and the config the replicas share but for their ledger.
 */
export async function replicaChain(prefix: string): Promise<{
  dir: string;
  localnet: { close(): Promise<void> };
  base: Omit<SignerConfig, 'ledger'>;
}> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const keyDir = path.join(dir, 'keys');
  const keys = makeBenchKeys(keyDir, KEYS);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- only the parent runs the chain: the forked replicas never load LiteSVM
  const { startLocalnet } = require('../src/localnet/server') as typeof import('../src/localnet/server');
  const localnet = await startLocalnet({
    port: 0,
    blockIntervalMs: BLOCK_MS,
    fund: keys.map((k) => ({ address: k.pubkey, lamports: 1_000_000_000_000 })),
  });
  // Each scenario sets its own ledger over this one.
  const base: Omit<SignerConfig, 'ledger'> = benchConfig(
    dir,
    {
      ...localCluster({ rpc_url: localnet.url, game_programs: [], player_profile: null }),
      genesis_hash: localnet.genesisHash,
    },
    keys,
    { timings: { ...DEFAULT_TIMINGS, poll_interval_ms: POLL_MS } },
  );
  return { dir, localnet, base };
}

export async function runReplicasBench(seconds: number): Promise<BenchLine[]> {
  const { dir, localnet, base } = await replicaChain('bench-replicas-');
  const pgUrl = (db: string | null) => PG_ADMIN_URL.replace(/\/[^/?]*(\?.*)?$/, `/${db}$1`);
  const scenarios: Scenario[] = [
    {
      label: "SQLite fsync'd, 1 replica",
      postgres: false,
      replicas: 1,
      ledger: (d) => ({
        store: 'sqlite',
        path: path.join(d, 'state', `ledger-${crypto.randomBytes(3).toString('hex')}.sqlite`),
      }),
    },
    {
      label: 'PostgreSQL, 1 replica',
      postgres: true,
      replicas: 1,
      ledger: (_d, db) => ({ store: 'postgres', url: pgUrl(db), pool_size: 10 }),
    },
    {
      label: 'PostgreSQL, 2 replicas (2 processes)',
      postgres: true,
      replicas: 2,
      ledger: (_d, db) => ({ store: 'postgres', url: pgUrl(db), pool_size: 10 }),
    },
  ];
  const lines: BenchLine[] = [];
  try {
    for (const s of scenarios) {
      let m: Measured;
      try {
        m = await runScenario(s, base, base.keys, dir, seconds * 1000);
      } catch (e) {
        lines.push({
          name: `replicas sign/s, ${KEYS} keys, ${s.label}`,
          value: NaN,
          unit: 'sign/s',
          note: `did not run: ${(e as Error).message.split('\n')[0]}`,
        });
        continue;
      }
      lines.push({
        name: `replicas sign/s, ${KEYS} keys, ${s.label}`,
        value: m.rate,
        unit: 'sign/s',
        note: boundNote(s, m),
      });
      lines.push({
        name: `replicas sign latency p50 / p99, ${s.label}`,
        value: m.p50,
        unit: `ms (p99 ${m.p99.toFixed(0)} ms)`,
      });
    }
  } finally {
    await localnet.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (require.main === module && process.argv[2] === 'worker') workerMain();
