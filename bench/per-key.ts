/**
 * Per-key benchmark: one key, 32 signs in flight, the chain at a
 * real cluster's pace (a block every 400 ms, `confirmed` two blocks after landing; the embedded chain in its own
 * process, `sa-forge-signer localnet --block-ms 400 --confirm-blocks 2`), SQLite ledger fsync'd.
 *
 * Two designs in the same run, on the same chain and key:
 * - today's: only the cap gate (usage, cap, halt, durable intent) keeps the key's other signs out, so signs overlap;
 * - the earlier one, the key held from the first check through confirmation. The engine no longer has that mode;
 *   this benchmark reproduces it by running each sign of the key under a FIFO mutex of its own around the whole
 *   engine.sign call (bench-only, in this file), which serialises the signs of the key exactly as that lock did
 *   within one process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localCluster } from '../src/config/clusters';
import { DEFAULT_TIMINGS, type KeyConfig } from '../src/config/types';
import { KeyedMutex } from '../src/ledger/mutex';
import { openLedger } from '../src/ledger/open';
import type { KeyLock, Ledger } from '../src/ledger/types';
import { openEngine } from '../src/signer';
import type { Report } from '../src/signer/report';
import type { SignerEngine } from '../src/signer/types';
import { transferPayload } from '../src/signer/transfer';
import { benchConfig, makeBenchKeys, timed } from './engine';
import { startChainProcess } from './service-fixture';
import { percentile, type BenchLine } from './stats';

const BLOCK_MS = 400;
const CONFIRM_BLOCKS = 2;
const IN_FLIGHT = 32;
/** How often a sign asks for its status: below the default 1 s, so the figure shows the lock, not the poll. */
const POLL_MS = 200;
const operator = { kind: 'operator' } as const;

/** How long each cap gate took, by the way it went. */
interface GateTimes {
  /** One write transaction (reserveAtOnce), from the call to its intent durable. */
  atOnce: number[];
  /** Under the key's lock: from taken to released (usage read, cap, halt, fsync'd intent). */
  locked: number[];
}

/** The ledger with every cap gate timed, whichever way it goes (flow/gate.ts). */
function timingGates(ledger: Ledger, times: GateTimes): Ledger {
  return new Proxy(ledger, {
    get(target, prop) {
      if (prop === 'reserveAtOnce') {
        const reserveAtOnce: Ledger['reserveAtOnce'] = async (request, decide) => {
          const started = performance.now();
          const result = await target.reserveAtOnce(request, decide);
          if (result !== null) times.atOnce.push(performance.now() - started);
          return result;
        };
        return reserveAtOnce;
      }
      if (prop === 'lockKey') {
        return async (key: string, signal?: AbortSignal): Promise<KeyLock> => {
          const lock = await target.lockKey(key, signal);
          const taken = performance.now();
          return {
            release: async () => {
              times.locked.push(performance.now() - taken);
              await lock.release();
            },
          };
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function openOnChain(
  times: GateTimes,
): Promise<{ engine: SignerEngine; key: KeyConfig; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-per-key-'));
  const [key] = makeBenchKeys(path.join(dir, 'keys'), 1);
  const chain = await startChainProcess(
    [{ address: key!.pubkey, lamports: 1_000_000_000_000 }],
    BLOCK_MS,
    CONFIRM_BLOCKS,
  );
  const config = benchConfig(
    dir,
    localCluster({ rpc_url: chain.url, game_programs: [], player_profile: null }),
    [key!],
    {
      timings: { ...DEFAULT_TIMINGS, poll_interval_ms: POLL_MS },
    },
  );
  const engine = await openEngine(config, { ledger: timingGates(await openLedger(config.ledger), times) });
  return {
    engine,
    key: key!,
    async close() {
      await engine.close();
      await chain.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function measure(
  design: string,
  seconds: number,
  sign: (engine: SignerEngine, key: KeyConfig, n: number) => Promise<Report>,
): Promise<BenchLine[]> {
  const times: GateTimes = { atOnce: [], locked: [] };
  const s = await openOnChain(times);
  try {
    // Amounts differ per sign: the same transfer on the same blockhash would be the same transaction.
    let n = 0;
    await sign(s.engine, s.key, n++); // warm-up
    times.atOnce.length = 0;
    times.locked.length = 0;
    const run = await timed(seconds * 1000, IN_FLIGHT, () => sign(s.engine, s.key, n++));
    const notConfirmed = run.results.filter((r) => r.outcome !== 'confirmed').length;
    const rate = run.count / run.seconds;
    const today = design === 'lock at the cap gate';
    return [
      {
        name: `per-key sign/s, one key, ${IN_FLIGHT} in flight, ${design}`,
        value: rate,
        unit: 'sign/s',
        ...(today ? { target: '>= 20', ok: rate >= 20 && notConfirmed === 0 } : {}),
        note: `${run.count} signs in ${run.seconds.toFixed(1)} s, ${notConfirmed} not confirmed`,
      },
      { name: `per-key sign latency p50, ${design}`, value: percentile(run.latencies, 50), unit: 'ms' },
      { name: `per-key sign latency p99, ${design}`, value: percentile(run.latencies, 99), unit: 'ms' },
      ...(today
        ? [
            {
              name: 'per-key cap gate p50 (usage, cap, halt, durable intent)',
              value: percentile([...times.atOnce, ...times.locked], 50),
              unit: 'ms',
              note: `${times.atOnce.length} as one write transaction (p50 ${percentile(times.atOnce, 50).toFixed(2)} ms, its fsync included), ${times.locked.length} under the key's lock${times.locked.length > 0 ? ` (held p50 ${percentile(times.locked, 50).toFixed(2)} ms)` : ''}`,
            },
          ]
        : []),
    ];
  } finally {
    await s.close();
  }
}

export async function runPerKeyBench(seconds: number): Promise<BenchLine[]> {
  const payload = (key: KeyConfig, n: number) =>
    transferPayload({ from: key.pubkey, to: key.transfer_to[0]!, lamports: 1_000_000 + n, summary: 'bench' });
  const lines = await measure('lock at the cap gate', seconds, (engine, key, n) =>
    engine.sign({ payload: payload(key, n), principal: operator }),
  );
  const held = new KeyedMutex();
  lines.push(
    ...(await measure('lock held through confirmation (earlier design)', seconds, async (engine, key, n) => {
      const release = await held.acquire(key.name);
      try {
        return await engine.sign({ payload: payload(key, n), principal: operator });
      } finally {
        release();
      }
    })),
  );
  const chainNote = `${BLOCK_MS} ms blocks, confirmed after ${CONFIRM_BLOCKS}, status polled every ${POLL_MS} ms`;
  for (const l of lines) if (l.unit === 'sign/s') l.note = `${l.note ?? ''}; ${chainNote}`;
  return lines;
}
