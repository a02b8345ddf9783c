/**
 * Failover benchmark (part of `BENCH_ONLY=replicas`): what a dying PostgreSQL primary costs the signers. Two signer
 * replicas (child processes, each one engine, as two pods) sign steadily on 16 keys, 2 in flight per key, against a
 * ledger given as one multi-host URL (docs/ledger.md, "Failover"). After `seconds` of load the primary is killed
 * with SIGKILL, and:
 * - failover: a synchronous standby (bench/pg-pair.ts) is promoted at once, as an orchestrator would;
 * - restart in place: the same run with one server and no standby, started again on its data directory after the
 *   kill (crash recovery, what `pg_ctl restart` of a dead server does).
 * Load goes on for `seconds` + 2 s after the kill. Each line gives sign/s confirmed in the `seconds` before the kill,
 * in the 2 s after it (ACROSS_MS) and in the `seconds` after those, and how long signing stopped: from the kill to the end of the first confirmed
 * sign started after it (a sign in flight at the kill may still confirm, but proves nothing about the new server).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { KeyConfig, SignerConfig } from '../src/config/types';
import { openEngine } from '../src/signer';
import { transferPayload } from '../src/signer/transfer';
import type { SignerEngine } from '../src/signer/types';
import { PgPair, pgPairAvailable } from './pg-pair';
import { replicaChain } from './replicas';
import type { BenchLine } from './stats';

const KEYS = 16;
const WORKERS_PER_KEY = 1; // per replica: 2 in flight per key over the two
/** The window after the kill in which the stop shows: signing stops for under a second, which a window of the
 *  benchmark's full length would average away. */
const ACROSS_MS = 2_000;

interface Sign {
  /** Epoch ms: both sides of the fork share the clock. */
  started: number;
  ended: number;
  confirmed: boolean;
  /** The error code or outcome of a sign that did not confirm. */
  why: string | null;
}

type ToWorker = { type: 'setup'; config: SignerConfig; replica: number } | { type: 'stop' } | { type: 'close' };
type FromWorker = { type: 'ready' } | { type: 'signs'; signs: Sign[] } | { type: 'error'; message: string };

// ---------------------------------------------------------------------------------------------------- worker side

function workerMain(): void {
  const send = (m: FromWorker) => process.send!(m);
  let engine: SignerEngine | null = null;
  let config: SignerConfig | null = null;
  let replica = 0;
  let stop = false;
  const signs: Sign[] = [];
  let load: Promise<unknown> = Promise.resolve();
  const sign = (k: KeyConfig, n: number) =>
    engine!.sign({
      payload: transferPayload({
        from: k.pubkey,
        to: k.transfer_to[0]!,
        lamports: 1_000_000 + n * 2 + replica,
        summary: 'bench failover',
      }),
      principal: { kind: 'operator' },
    });

  process.on('message', (msg: ToWorker) => {
    void (async () => {
      try {
        if (msg.type === 'setup') {
          config = msg.config;
          replica = msg.replica;
          engine = await openEngine(config);
          await Promise.all(config.keys.map((k, i) => sign(k, 1_000_000 + i)));
          // Steady load from now until told to stop; the parent kills the ledger's primary meanwhile.
          load = Promise.all(
            config.keys.flatMap((k, ki) =>
              Array.from({ length: WORKERS_PER_KEY }, async (_, w) => {
                for (let i = 0; !stop; i++) {
                  const s: Sign = { started: Date.now(), ended: 0, confirmed: false, why: null };
                  try {
                    const r = await sign(k, (i * WORKERS_PER_KEY + w) * KEYS + ki);
                    s.confirmed = r.outcome === 'confirmed';
                    if (!s.confirmed) s.why = r.outcome;
                  } catch (e) {
                    s.why = (e as { code?: string }).code ?? (e as Error).message.slice(0, 60);
                  }
                  s.ended = Date.now();
                  signs.push(s);
                }
              }),
            ),
          );
          send({ type: 'ready' });
        } else if (msg.type === 'stop') {
          stop = true;
          await load;
          send({ type: 'signs', signs });
        } else {
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

  constructor(config: SignerConfig, replica: number) {
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
    this.child.send({ type: 'setup', config, replica } satisfies ToWorker);
  }

  async next(): Promise<FromWorker> {
    const m = this.queue.shift() ?? (await new Promise<FromWorker>((resolve) => (this.waiter = resolve)));
    if (m.type === 'error') throw new Error(`replica: ${m.message}`);
    return m;
  }

  async stop(): Promise<Sign[]> {
    this.child.send({ type: 'stop' } satisfies ToWorker);
    const m = await this.next();
    if (m.type !== 'signs') throw new Error(`replica: unexpected ${m.type}`);
    return m.signs;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.send({ type: 'close' } satisfies ToWorker);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

interface Measured {
  before: number;
  across: number;
  after: number;
  stoppedMs: number;
  /** Kill to the new server accepting writes (promotion, or the restarted server up). */
  serverBackMs: number;
  notConfirmed: Map<string, number>;
}

async function runOne(
  mode: 'failover' | 'restart',
  base: Omit<SignerConfig, 'ledger'>,
  seconds: number,
): Promise<Measured> {
  const pair = await PgPair.start({ synchronous: true, standby: mode === 'failover' });
  const replicas: Replica[] = [];
  try {
    const config: SignerConfig = { ...base, ledger: { store: 'postgres', url: pair.multiHostUrl, pool_size: 10 } };
    // One replica first, so the schema migrations are not part of what the other waits on.
    replicas.push(new Replica(config, 0));
    await replicas[0]!.next();
    replicas.push(new Replica(config, 1));
    await replicas[1]!.next();
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const killAt = Date.now();
    await pair.kill(pair.primary);
    if (mode === 'failover') await pair.promote(pair.standby);
    else await pair.startServer(pair.primary, false);
    const serverBackMs = Date.now() - killAt;
    await new Promise((r) => setTimeout(r, Math.max(0, killAt + ACROSS_MS + seconds * 1000 - Date.now())));
    const signs = (await Promise.all(replicas.map((r) => r.stop()))).flat();

    const w = seconds * 1000;
    const rate = (from: number, to: number) =>
      signs.filter((s) => s.confirmed && s.ended >= from && s.ended < to).length / ((to - from) / 1000);
    const firstAfter = Math.min(...signs.filter((s) => s.confirmed && s.started >= killAt).map((s) => s.ended));
    const notConfirmed = new Map<string, number>();
    for (const s of signs) if (!s.confirmed) notConfirmed.set(s.why!, (notConfirmed.get(s.why!) ?? 0) + 1);
    return {
      before: rate(killAt - w, killAt),
      across: rate(killAt, killAt + ACROSS_MS),
      after: rate(killAt + ACROSS_MS, killAt + ACROSS_MS + w),
      stoppedMs: firstAfter - killAt,
      serverBackMs,
      notConfirmed,
    };
  } finally {
    await Promise.allSettled(replicas.map((r) => r.close()));
    pair.close();
  }
}

export async function runFailoverBench(seconds: number): Promise<BenchLine[]> {
  const label = (mode: string) => `replicas failover, 2 replicas, ${mode}`;
  if (!pgPairAvailable())
    return [
      {
        name: label('primary killed'),
        value: NaN,
        unit: 'sign/s',
        note: 'did not run: no PostgreSQL server binaries (initdb, pg_basebackup)',
      },
    ];
  const { dir, localnet, base } = await replicaChain('bench-failover-');
  const lines: BenchLine[] = [];
  try {
    for (const [mode, what] of [
      ['failover', 'primary kill -9, synchronous standby promoted'],
      ['restart', 'one server kill -9, restarted in place'],
    ] as const) {
      let m: Measured;
      try {
        m = await runOne(mode, base, seconds);
      } catch (e) {
        lines.push({
          name: label(what),
          value: NaN,
          unit: 'ms',
          note: `did not run: ${(e as Error).message.split('\n')[0]}`,
        });
        continue;
      }
      const errors = [...m.notConfirmed].map(([why, n]) => `${why} ${n}`).join(', ') || 'none';
      lines.push({
        name: `${label(what)}: signing stopped`,
        value: m.stoppedMs,
        unit: 'ms',
        note:
          `kill to the first confirmed sign started after it; server writable again ${m.serverBackMs} ms after the kill; ` +
          `sign/s ${seconds} s before ${m.before.toFixed(0)}, ${ACROSS_MS / 1000} s after the kill ${m.across.toFixed(0)}, ` +
          `${seconds} s after those ${m.after.toFixed(0)}; not confirmed: ${errors}`,
      });
    }
  } finally {
    await localnet.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

if (require.main === module && process.argv[2] === 'worker') workerMain();
