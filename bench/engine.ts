/**
 * Engine benchmark: check/s for one key, sign/s across 16 keys with the SQLite ledger
 * fsync'd, p50/p99 sign latency, the engine's own CPU per sign (one sign at a time) beside one raw Ed25519
 * signature, and the process's CPU per sign under the sign load (16 keys, two in flight per key).
 *
 * Throughput runs against the in-process chain (LiteSVM behind its JSON-RPC endpoint in this process). The
 * CPU-per-sign figure runs the chain in a child process, so the process CPU measured is the engine's own
 * (payload, checks, signing, RPC client, ledger) and not LiteSVM's; waiting for the chain costs no CPU.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localCluster } from '../src/config/clusters';
import { DEFAULT_SOCKET_LIMITS, DEFAULT_TIMINGS, type KeyConfig, type SignerConfig } from '../src/config/types';
import { createKeyFile } from '../src/keys/keyfile';
import { openEngine } from '../src/signer';
import type { SignerEngine } from '../src/signer/types';
import { transferPayload } from '../src/signer/transfer';
import { encodeBase58 } from '../src/util/base58';
import { nowSeconds } from '../src/util/time';
import { percentile, type BenchLine } from './stats';
import { startChainProcess } from './service-fixture';
import { JsonRpcClient } from '../src/rpc/rpc-client';
import { openLedger } from '../src/ledger/open';
import type { AuditEntryInput, Ledger } from '../src/ledger/types';
import type { RpcClient } from '../src/rpc/types';

/**
 * The process CPU spent while at least one call of one kind is outstanding. With one sign at a time nothing else
 * runs meanwhile, so that is the share of a sign those calls cost.
 */
export class OutstandingCpu {
  micros = 0;
  calls = 0;
  private outstanding = 0;
  private since: NodeJS.CpuUsage | null = null;

  reset(): void {
    this.micros = 0;
    this.calls = 0;
  }

  /** Starts counting one call; the function returned ends it. */
  begin(): () => void {
    this.calls++;
    if (this.outstanding++ === 0) this.since = process.cpuUsage();
    return () => {
      if (--this.outstanding === 0 && this.since) {
        const d = process.cpuUsage(this.since);
        this.micros += d.user + d.system;
      }
    };
  }
}

/**
 * Counts the process CPU spent while at least one RPC call is outstanding (request encoding, socket I/O,
 * response parsing): with one sign at a time, that is the RPC share of a sign; the rest is the engine's own.
 */
export class CpuAccountedChain implements RpcClient {
  readonly meter = new OutstandingCpu();

  constructor(private readonly inner: RpcClient) {}

  get commitment(): RpcClient['commitment'] {
    return this.inner.commitment;
  }

  get cpuMicros(): number {
    return this.meter.micros;
  }

  get calls(): number {
    return this.meter.calls;
  }

  reset(): void {
    this.meter.reset();
  }

  private async wrap<T>(call: () => Promise<T>): Promise<T> {
    const end = this.meter.begin();
    try {
      return await call();
    } finally {
      end();
    }
  }

  // Every argument is passed on (a call's deadline and signal included), so the engine behaves as it does unmetered.
  getGenesisHash: RpcClient['getGenesisHash'] = (...a) => this.wrap(() => this.inner.getGenesisHash(...a));
  getLatestBlockhash: RpcClient['getLatestBlockhash'] = (...a) => this.wrap(() => this.inner.getLatestBlockhash(...a));
  getBalance: RpcClient['getBalance'] = (...a) => this.wrap(() => this.inner.getBalance(...a));
  getFeeForMessage: RpcClient['getFeeForMessage'] = (...a) => this.wrap(() => this.inner.getFeeForMessage(...a));
  simulateTransaction: RpcClient['simulateTransaction'] = (...a) =>
    this.wrap(() => this.inner.simulateTransaction(...a));
  sendTransaction: RpcClient['sendTransaction'] = (...a) => this.wrap(() => this.inner.sendTransaction(...a));
  getSignatureStatuses: RpcClient['getSignatureStatuses'] = (...a) =>
    this.wrap(() => this.inner.getSignatureStatuses(...a));
  getBlockHeight: RpcClient['getBlockHeight'] = (...a) => this.wrap(() => this.inner.getBlockHeight(...a));
  getTransaction: RpcClient['getTransaction'] = (...a) => this.wrap(() => this.inner.getTransaction(...a));
  getSignaturesForAddress: RpcClient['getSignaturesForAddress'] = (...a) =>
    this.wrap(() => this.inner.getSignaturesForAddress(...a));
  getMultipleAccounts: RpcClient['getMultipleAccounts'] = (...a) =>
    this.wrap(() => this.inner.getMultipleAccounts(...a));
  getAccountInfo: RpcClient['getAccountInfo'] = (...a) => this.wrap(() => this.inner.getAccountInfo(...a));
  getAccountsData: RpcClient['getAccountsData'] = (...a) => this.wrap(() => this.inner.getAccountsData(...a));
  getAccountsAtSlot: RpcClient['getAccountsAtSlot'] = (...a) => this.wrap(() => this.inner.getAccountsAtSlot(...a));
  isBlockhashValid: RpcClient['isBlockhashValid'] = (...a) => this.wrap(() => this.inner.isBlockhashValid(...a));
}

/**
 * The ledger with the CPU of its calls counted in `meter`: each call from its start until its promise settles,
 * the durable writes' fsyncs included. Every member of a ledger that is a function is a call.
 */
export function cpuAccountedLedger(ledger: Ledger, meter: OutstandingCpu): Ledger {
  return new Proxy(ledger, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const end = meter.begin();
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (e) {
          end();
          throw e;
        }
        if (result instanceof Promise) return result.finally(end);
        end();
        return result;
      };
    },
  });
}

const KEYS = 16;
/**
 * Signs made before a CPU-per-sign figure is measured. After 20 signs V8 is still compiling the flow's functions on
 * its own threads (counted in the process's CPU); by 200 it has settled, as it has in a service that signs all day.
 */
export const WARM_UP_SIGNS = 200;

export const BLOCK_MS = 20; // a fast local cluster: confirmation costs one block plus a poll
/**
 * A chain that answers as fast as the engine asks: one sign at a time never leaves the process idle for long, so
 * its CPU is the engine's work without the price this machine puts on waking from idle (see idlePrice).
 */
const WARM_BLOCK_MS = 2;
/** Long enough for the machine to put an idle process's CPU to sleep, as a 20 ms block does. */
const IDLE_MS = 30;

interface Setup {
  chain: CpuAccountedChain;
  ledger: Ledger;
  /** The CPU of the engine's calls into `ledger`. */
  ledgerCpu: OutstandingCpu;
  dir: string;
  config: SignerConfig;
  engine: SignerEngine;
  keys: KeyConfig[];
  close(): Promise<void>;
}

/** The engine benchmarks never serve HTTP: a serve section that is valid but unused. */
export const BENCH_SERVE: SignerConfig['serve'] = {
  listen: { host: '127.0.0.1', port: 0 },
  allowed_hosts: [],
  tokens: [],
  max_in_flight: 32,
  max_in_flight_per_token: 16,
  rate_limit_per_minute: 1,
  body_limit_bytes: 1,
  ...DEFAULT_SOCKET_LIMITS,
  drain_ms: 0,
  param_headers: true,
  metrics: null,
};

/**
 * The config every bench engine runs with: bench keys whose files are in `dir`/keys, state and a SQLite ledger in
 * `dir`/state, the cluster given, no HTTP, no logs. A bench overrides what it measures (ledger, timings, stores).
 */
export function benchConfig(
  dir: string,
  cluster: SignerConfig['cluster'],
  keys: KeyConfig[],
  overrides: Partial<SignerConfig> = {},
): SignerConfig {
  return {
    source: null,
    cluster,
    key_dir: path.join(dir, 'keys'),
    state_dir: path.join(dir, 'state'),
    keys,
    ledger: { store: 'sqlite', path: path.join(dir, 'state', 'ledger.sqlite') },
    timings: DEFAULT_TIMINGS,
    serve: BENCH_SERVE,
    localnet: null,
    log_level: 'silent',
    ...overrides,
  };
}

/** Session keys k00, k01, … with files in keyDir, each allowed one random destination, limits out of the way. */
export function makeBenchKeys(keyDir: string, count: number): KeyConfig[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `k${String(i).padStart(2, '0')}`;
    return {
      name,
      class: 'session',
      pubkey: createKeyFile(keyDir, name),
      profile: null,
      approval: 'auto',
      transfer_to: [encodeBase58(crypto.randomBytes(32))],
      extra_programs: [],
      rate_limit_per_minute: 1_000_000,
      daily_lamport_cap: 1_000_000_000_000,
      allow_unattended: false,
    } satisfies KeyConfig;
  });
}

/**
 * The embedded chain with every key funded: in this process (the engine's load shares its CPU) or in a child
 * process (so the engine's own CPU can be measured apart from the chain's).
 */
export async function startBenchChain(
  rpc: 'in-process' | 'child-process',
  keys: readonly KeyConfig[],
  blockMs = BLOCK_MS,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const fund = keys.map((k) => ({ address: k.pubkey, lamports: 1_000_000_000_000 }));
  if (rpc === 'in-process') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for this mode, so the other mode never loads LiteSVM
    const { startLocalnet } = require('../src/localnet/server') as typeof import('../src/localnet/server');
    const localnet = await startLocalnet({ port: 0, blockIntervalMs: blockMs, fund });
    return { url: localnet.url, stop: () => localnet.close() };
  }
  const chain = await startChainProcess(fund, blockMs);
  return { url: chain.url, stop: () => chain.stop() };
}

interface SetupOptions {
  blockMs?: number;
  /**
   * false gives the engine the chain client and the ledger themselves, without the meters that count the CPU of
   * their calls: a meter reads the process's CPU clock twice per call (a system call each), which the loaded
   * figure, not reading the meters, would otherwise count as the signer's.
   */
  metered?: boolean;
  /** false: the cluster config turns signature subscriptions off, so confirmations are polled only. */
  subscriptions?: boolean;
  /** The status poll's interval; by default twice a block. */
  pollMs?: number;
}

async function setup(
  rpc: 'in-process' | 'child-process',
  keyCount: number,
  { blockMs = BLOCK_MS, metered = true, subscriptions = true, pollMs }: SetupOptions = {},
): Promise<Setup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-engine-'));
  const keyDir = path.join(dir, 'keys');
  const keys = makeBenchKeys(keyDir, keyCount);
  const { url, stop: stopChain } = await startBenchChain(rpc, keys, blockMs);
  const config = benchConfig(
    dir,
    {
      ...localCluster({ rpc_url: url, game_programs: [], player_profile: null }),
      ...(subscriptions ? {} : { signature_subscriptions: false }),
    },
    keys,
    {
      // By default the status is polled twice a block, so confirmation costs about the same number of polls at any
      // block time.
      timings: { ...DEFAULT_TIMINGS, poll_interval_ms: pollMs ?? Math.max(1, blockMs / 2) },
    },
  );
  const rpcClient = new JsonRpcClient(url, { timeoutMs: config.timings.rpc_timeout_ms });
  const chain = new CpuAccountedChain(rpcClient);
  const ledger = await openLedger(config.ledger);
  const ledgerCpu = new OutstandingCpu();
  const engine = await openEngine(
    config,
    metered ? { chain, ledger: cpuAccountedLedger(ledger, ledgerCpu) } : { chain: rpcClient, ledger },
  );
  return {
    dir,
    ledger,
    ledgerCpu,
    config,
    engine,
    keys,
    chain,
    async close() {
      await engine.close();
      await stopChain();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const operator = { kind: 'operator' } as const;
const payloadFor = (k: KeyConfig, i: number) =>
  transferPayload({ from: k.pubkey, to: k.transfer_to[0]!, lamports: 1_000_000 + i, summary: 'bench' });

/** Runs `op` from `concurrency` workers back to back for `ms`; every call's latency and result. */
export async function timed<T>(
  ms: number,
  concurrency: number,
  op: (worker: number, i: number) => Promise<T>,
): Promise<{ count: number; seconds: number; latencies: number[]; results: T[] }> {
  const end = performance.now() + ms;
  const started = performance.now();
  const latencies: number[] = [];
  const results: T[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; performance.now() < end; i++) {
        const t0 = performance.now();
        results.push(await op(worker, i));
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { count: latencies.length, seconds: (performance.now() - started) / 1000, latencies, results };
}

export function rawSignatureMicros(): number {
  const seed = crypto.randomBytes(32);
  const key = crypto.createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]),
    format: 'der',
    type: 'pkcs8',
  });
  const msg = crypto.randomBytes(220);
  for (let i = 0; i < 2000; i++) crypto.sign(null, msg, key);
  const n = 20_000;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) crypto.sign(null, msg, key);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / n;
}

export async function runEngineBench(seconds: number): Promise<BenchLine[]> {
  const lines: BenchLine[] = [];
  const rawUs = rawSignatureMicros();

  const s = await setup('in-process', KEYS);
  try {
    const key = s.keys[0]!;
    await s.engine.check({ payload: payloadFor(key, 0), principal: operator }); // warm-up
    const checks = await timed(seconds * 1000, 16, (_w, i) =>
      s.engine.check({ payload: payloadFor(key, i), principal: operator }),
    );
    const failedChecks = checks.results.filter((r) => r.outcome !== 'ok').length;
    lines.push({
      name: 'engine check/s, one key, 16 in flight',
      value: checks.count / checks.seconds,
      unit: 'check/s',
      target: '>= 500',
      ok: checks.count / checks.seconds >= 500 && failedChecks === 0,
      note: `${failedChecks} not ok`,
    });

    // Two signs in flight per key: the second waits on the key lock, as concurrent agents would.
    const signs = await timed(seconds * 1000, KEYS * 2, (w, i) =>
      s.engine.sign({ payload: payloadFor(s.keys[w % KEYS]!, i * 100 + w), principal: operator }),
    );
    const notConfirmed = signs.results.filter((r) => r.outcome !== 'confirmed').length;
    const rate = signs.count / signs.seconds;
    lines.push({
      name: `engine sign/s, ${KEYS} keys, SQLite fsync'd, ${BLOCK_MS} ms blocks`,
      value: rate,
      unit: 'sign/s',
      target: '>= 100',
      ok: rate >= 100 && notConfirmed === 0,
      note: `${notConfirmed} not confirmed`,
    });
    lines.push({
      name: 'engine sign latency p50 (incl. lock wait and confirmation)',
      value: percentile(signs.latencies, 50),
      unit: 'ms',
    });
    lines.push({ name: 'engine sign latency p99', value: percentile(signs.latencies, 99), unit: 'ms' });
  } finally {
    await s.close();
  }

  const c = await setup('child-process', 1);
  const n = Math.max(50, seconds * 20);
  try {
    const stages = new StageClock(c.chain);
    const run = await oneAtATime(c, n, { stages });
    lines.push({ name: 'raw Ed25519 signature (node:crypto, cached key)', value: rawUs, unit: 'µs CPU' });
    lines.push({
      name: 'process CPU per sign, RPC client included (chain in another process)',
      value: run.perSign,
      unit: 'µs CPU',
      note: `${(run.perSign / rawUs).toFixed(1)}x raw; ${run.rpcCalls.toFixed(1)} RPC calls per sign`,
    });
    lines.push({
      name: 'engine CPU per sign excluding RPC calls',
      value: run.own,
      unit: 'µs CPU',
      target: `<= 20x raw (${(20 * rawUs).toFixed(0)} µs)`,
      ok: run.own <= 20 * rawUs,
      note: `${(run.own / rawUs).toFixed(1)}x raw`,
    });
    lines.push(...stages.lines(n));
    lines.push(...(await ledgerParts(c.ledger, c.keys[0]!.name, run)));
  } finally {
    await c.close();
  }
  lines.push(...(await idlePrice(n, rawUs)));
  lines.push(...(await loadedProcessCpu(seconds, rawUs)));
  return lines;
}

const LOADED: SetupOptions = {
  metered: false,
  ...(process.env.BENCH_POLL_MS ? { pollMs: Number(process.env.BENCH_POLL_MS) } : {}),
};
/** Measured rounds of each build of the loaded figure, taken in turn so a drift of the machine falls on both. */
const LOADED_ROUNDS = 3;

/**
 * The same process CPU per sign as above, but with the sign load of the throughput line (16 keys, two in flight
 * per key): what a busy service spends on a sign, and the figure of the target (<= 12x a raw signature). Concurrent
 * signs share JSON-RPC batches, event-loop wake-ups and fsyncs, which one sign at a time cannot. RPC calls overlap
 * the engine's work here, so their CPU cannot be told apart and is included. The chain runs in its own process, as a
 * remote cluster would: the process measured holds the signer (engine, RPC client, WebSocket subscriptions, ledger)
 * and this loop, nothing of the chain. Beside it, in alternating rounds, the same signer with signature
 * subscriptions turned off (confirmations polled only), to show what the subscriptions cost.
 */
export async function loadedProcessCpu(seconds: number, rawUs: number): Promise<BenchLine[]> {
  const builds = [
    { name: 'as configured by default', setup: await setup('child-process', KEYS, LOADED), micros: 0 },
    {
      name: 'signature subscriptions off (polled only)',
      setup: await setup('child-process', KEYS, { ...LOADED, subscriptions: false }),
      micros: 0,
    },
  ];
  try {
    const signAll = async (l: Setup, count: number, from: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: KEYS * 2 }, async (_, w) => {
          for (let i = next++; i < count; i = next++) {
            const key = l.keys[w % KEYS]!;
            const r = await l.engine.sign({ payload: payloadFor(key, from + i), principal: operator });
            if (r.outcome !== 'confirmed') throw new Error(`a loaded sign ended ${r.outcome}`);
          }
        }),
      );
    };
    for (const b of builds) await signAll(b.setup, WARM_UP_SIGNS, 0);
    const perRound = Math.ceil(Math.max(200, seconds * 100) / LOADED_ROUNDS);
    for (let r = 0; r < LOADED_ROUNDS; r++) {
      for (const [i, b] of builds.entries()) {
        // The profile, when asked for, is of the default build's first round.
        const profile = await profiling(r === 0 && i === 0 ? process.env.BENCH_CPU_PROFILE : undefined);
        const cpu0 = process.cpuUsage();
        await signAll(b.setup, perRound, 1_000_000 * (r + 1));
        const cpu = process.cpuUsage(cpu0);
        await profile.stop();
        b.micros += cpu.user + cpu.system;
      }
    }
    const n = perRound * LOADED_ROUNDS;
    const [main, polled] = builds.map((b) => b.micros / n) as [number, number];
    return [
      {
        name: `process CPU per sign, RPC client included, ${KEYS} keys x 2 in flight (chain in another process)`,
        value: main,
        unit: 'µs CPU',
        target: `<= 12x raw (${(12 * rawUs).toFixed(0)} µs)`,
        ok: main <= 12 * rawUs,
        note: `${(main / rawUs).toFixed(1)}x raw; ${n} signs in ${LOADED_ROUNDS} rounds`,
      },
      {
        name: `  the same, ${builds[1]!.name}, rounds in turn with the above`,
        value: polled,
        unit: 'µs CPU',
        note: `${(polled / rawUs).toFixed(1)}x raw`,
      },
    ];
  } finally {
    for (const b of builds) await b.setup.close();
  }
}

/**
 * With a file name, V8's sampling profiler over the measured signs only (not the set-up, the warm-up, nor the raw
 * signatures the figure divides by), written there as a .cpuprofile when stopped; without one, nothing.
 */
async function profiling(file: string | undefined): Promise<{ stop(): Promise<void> }> {
  if (!file) return { stop: async () => {} };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when a profile is asked for
  const { Session } = require('node:inspector/promises') as typeof import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      fs.writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

export interface OneAtATime {
  /** Process CPU per sign, RPC client included. */
  perSign: number;
  /** The same without the CPU spent while an RPC call was outstanding: the engine's own. */
  own: number;
  rpcCalls: number;
  /** Of `own`, the CPU spent while a ledger call was outstanding; null when the setup does not count it. */
  ledger: number | null;
}

/**
 * `n` signs one after another on the setup's first key, after the warm-up, with `idleMs` of nothing between two
 * signs when given (the process CPU counts the wake-up from it, as a sign's own wake-ups are counted).
 */
export async function oneAtATime(
  c: Pick<Setup, 'engine' | 'keys' | 'chain'> & Partial<Pick<Setup, 'ledgerCpu'>>,
  n: number,
  opts: { stages?: StageClock; idleMs?: number; first?: number; warmUp?: boolean } = {},
): Promise<OneAtATime> {
  const key = c.keys[0]!;
  const { stages, idleMs, first = 0, warmUp = true } = opts;
  // Every payload differs (its lamports), so no two signs of a run build the same transaction.
  const payload = (i: number) => payloadFor(key, first + i);
  if (warmUp) for (let i = 0; i < WARM_UP_SIGNS; i++) await c.engine.sign({ payload: payload(i), principal: operator });
  c.chain.reset();
  c.ledgerCpu?.reset();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    stages?.enter('checks');
    const report = await c.engine.sign({
      payload: payload(WARM_UP_SIGNS + i),
      principal: operator,
      onProgress: stages && ((p) => stages.enter(p.stage === 'lock' ? 'gate' : 'send')),
    });
    stages?.enter(null);
    if (report.outcome !== 'confirmed') throw new Error(`a sign ended ${report.outcome}: ${report.detail ?? ''}`);
    if (idleMs) await new Promise((resolve) => setTimeout(resolve, idleMs));
  }
  const cpu = process.cpuUsage(cpu0);
  const perSign = (cpu.user + cpu.system) / n;
  return {
    perSign,
    own: perSign - c.chain.cpuMicros / n,
    rpcCalls: c.chain.calls / n,
    ledger: c.ledgerCpu ? c.ledgerCpu.micros / n : null,
  };
}

/** CPU of one raw signature made right after `idleMs` of idle, the wake-up itself not counted; median of 100. */
async function rawSignatureAfterIdle(idleMs: number): Promise<number> {
  const key = crypto.generateKeyPairSync('ed25519').privateKey;
  const msg = crypto.randomBytes(220);
  const costs: number[] = [];
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const cpu0 = process.cpuUsage();
    crypto.sign(null, msg, key);
    const cpu = process.cpuUsage(cpu0);
    costs.push(cpu.user + cpu.system);
  }
  return percentile(costs, 50);
}

/**
 * What waking from idle costs on this machine, beside the target's figure. One sign at a time against 20 ms blocks
 * leaves the process idle between its steps; a CPU that was idle for a while runs the next work slower (cold caches,
 * a core the host clocked down or gave away), and that is counted in the engine's CPU but never in the raw
 * signature the target divides by, which runs in a tight loop. Shown three ways: the same signature right after an
 * idle, the same engine against a chain that never leaves it idle long (2 ms blocks), and that engine again with an
 * idle after each sign.
 */
async function idlePrice(n: number, rawUs: number): Promise<BenchLine[]> {
  const coldRaw = await rawSignatureAfterIdle(IDLE_MS);
  const w = await setup('child-process', 1, { blockMs: WARM_BLOCK_MS });
  try {
    // Four rounds of each in turn, so a drift of the machine's speed falls on both alike.
    const rounds = 4;
    const per = Math.ceil(n / rounds);
    const warmRuns: OneAtATime[] = [];
    const idleRuns: OneAtATime[] = [];
    for (let r = 0; r < rounds; r++) {
      const first = WARM_UP_SIGNS + 2 * r * per;
      warmRuns.push(await oneAtATime(w, per, { first, warmUp: r === 0 }));
      idleRuns.push(await oneAtATime(w, per, { first: first + per, warmUp: false, idleMs: IDLE_MS }));
    }
    const mean = (runs: OneAtATime[], of: (r: OneAtATime) => number) =>
      runs.reduce((sum, x) => sum + of(x), 0) / runs.length;
    const warm = mean(warmRuns, (r) => r.own);
    const warmLedger = mean(warmRuns, (r) => r.ledger ?? 0);
    const idle = mean(idleRuns, (r) => r.own);
    const times = (v: number) => `${(v / rawUs).toFixed(1)}x raw`;
    return [
      { name: `  raw signature right after ${IDLE_MS} ms idle`, value: coldRaw, unit: 'µs CPU', note: times(coldRaw) },
      {
        name: `  engine CPU per sign excl. RPC, ${WARM_BLOCK_MS} ms blocks (never idle long)`,
        value: warm,
        unit: 'µs CPU',
        note: `${times(warm)}; the ledger's calls ${warmLedger.toFixed(0)} µs of it`,
      },
      {
        name: `  the same with ${IDLE_MS} ms idle after each sign`,
        value: idle,
        unit: 'µs CPU',
        note: `${times(idle)}; the idle adds ${(idle - warm).toFixed(0)} µs`,
      },
    ];
  } finally {
    await w.close();
  }
}

type Stage = 'checks' | 'gate' | 'send';
const STAGE_NAMES: Record<Stage, string> = {
  checks: 'checks, compile and simulation (to the key lock)',
  gate: 'the cap gate: usage, cap, halt, durable intent (to sent)',
  send: 'send, confirmation and the durable final entry',
};

/**
 * The engine's own CPU (outside RPC calls) split by the sign's stages, told apart by its progress events. Only
 * meaningful for signs run one at a time: then all of the process's CPU between two events is that stage's.
 */
class StageClock {
  private readonly own = new Map<Stage, number>();
  private current: Stage | null = null;
  private cpuAt = 0;
  private rpcAt = 0;

  constructor(private readonly chain: CpuAccountedChain) {}

  enter(stage: Stage | null): void {
    const c = process.cpuUsage();
    const cpu = c.user + c.system;
    if (this.current !== null && stage !== this.current) {
      const own = cpu - this.cpuAt - (this.chain.cpuMicros - this.rpcAt);
      this.own.set(this.current, (this.own.get(this.current) ?? 0) + own);
    }
    if (stage !== this.current) {
      this.current = stage;
      this.cpuAt = cpu;
      this.rpcAt = this.chain.cpuMicros;
    }
  }

  lines(n: number): BenchLine[] {
    return (Object.keys(STAGE_NAMES) as Stage[]).map((s) => ({
      name: `  stage: ${STAGE_NAMES[s]}`,
      value: (this.own.get(s) ?? 0) / n,
      unit: 'µs CPU',
    }));
  }
}

/** CPU of `op` per call, over `n` calls one after another. */
async function cpuPerCall(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(20, n); i++) await op(i);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await op(i);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / n;
}

/**
 * What the ledger's parts of a sign cost, each on its own on the ledger the signs above wrote: a sign reads its
 * key's usage once before simulating (the preflight), passes the cap gate (on SQLite one write transaction that
 * reads the usage, the in-flight signatures and the halt and appends the durable intent) and appends its durable
 * final. The usage read is also timed on a key with 20,000 entries today, to show that it does not grow with the
 * key's day; the key lock, which a gate takes only when it cannot be one transaction, is timed for comparison.
 * First, what the same calls cost inside the signs: more than on their own, since a sign reaches each of them cold.
 */
async function ledgerParts(ledger: Ledger, key: string, run: OneAtATime): Promise<BenchLine[]> {
  const entry = (i: number): AuditEntryInput => ({
    ts: nowSeconds(),
    key: 'parts',
    command: i % 2 === 0 ? 'sign-intent' : 'sign',
    payload_hash: crypto.createHash('sha256').update(String(i)).digest('hex'),
    programs: ['11111111111111111111111111111111'],
    summary: 'bench',
    intent: null,
    outcome: i % 2 === 0 ? 'pending' : 'confirmed',
    detail: null,
    signature: encodeBase58(
      crypto
        .createHash('sha512')
        .update(String(i >> 1))
        .digest(),
    ),
    slot: null,
    balance_change: -1_000_000,
  });
  const append = await cpuPerCall(200, (i) => ledger.append(entry(2 * i + 1)));
  const usage = await cpuPerCall(500, () => ledger.keyUsage(key, nowSeconds()));
  await ledger.keyUsage('parts', nowSeconds());
  let gates = 0;
  const gate = await cpuPerCall(200, async () => {
    const intent = entry(1_000_000 + 2 * gates++);
    const request = { key: 'parts', now: nowSeconds(), dailyCap: 1e15, signature: intent.signature };
    const passed = await ledger.reserveAtOnce(request, (view) => ({ intent, result: !view.signatureInFlight }));
    if (passed !== true) throw new Error('the bench gate was not one transaction');
  });
  const lock = await cpuPerCall(200, async () => (await ledger.lockKey(key)).release());
  // A busy key's day: 20,000 entries written in batches, then the usage read as a sign makes it.
  for (let b = 0; b < 20_000; b += 500)
    await Promise.all(Array.from({ length: 500 }, (_, i) => ledger.append({ ...entry(b + i), key: 'busy' })));
  const busyUsage = await cpuPerCall(500, () => ledger.keyUsage('busy', nowSeconds()));
  const parts = append + usage + gate;
  const line = (name: string, value: number): BenchLine => ({ name, value, unit: 'µs CPU' });
  const inFlow = run.ledger ?? 0;
  return [
    line(`  ledger: its calls inside the signs above (usage read, cap gate, final entry; fsyncs included)`, inFlow),
    line('  ledger part: the durable final append', append),
    line('  ledger part: the preflight usage read', usage),
    line('  ledger part: usage read of a key with 20,000 entries today', busyUsage),
    line('  ledger part: the cap gate, one write transaction with the durable intent', gate),
    line('  ledger part: a key lock taken and released (gates that cannot be one transaction)', lock),
    {
      name: '  the rest of a sign (payload, checks, compile, signing, reports)',
      value: run.own - inFlow,
      unit: 'µs CPU',
      note: `the ledger's parts on their own together ${parts.toFixed(0)} µs`,
    },
  ];
}
