/**
 * What a remote provider's distance costs a sign: the engine against the embedded chain behind the latency proxy
 * (latency-proxy.ts, a stand-in for a provider 40 ms away each way), blocks every 400 ms and confirmed after 2, as
 * on a real cluster. sign_only and sign (send and confirm) one at a time, their p50 and p99; sign again less the
 * chain's own confirmation time (from the send reaching the chain to the chain reporting it confirmed, watched
 * on the chain directly, not through the proxy); and the HTTP requests each sign sends before its send, from the
 * client's count (src/rpc/request-count.ts) and from the proxy's. Beside them, the baseline a reader can check the
 * signs against: a bare client at the same distance (bare-client.ts, @solana/kit through the same proxy, the notice
 * alone), its send-to-confirmed p50 and p99, and sign's p50 less the bare client's, in round trips.
 *
 * `BENCH_ONLY=latency npm run bench`. The timings are the shipped defaults (confirmation polled every
 * `poll_interval_ms`), so the figures are the ones an operator gets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localCluster } from '../src/config/clusters';
import type { KeyConfig } from '../src/config/types';
import { openLedger } from '../src/ledger/open';
import { JsonRpcClient } from '../src/rpc/rpc-client';
import { openEngine } from '../src/signer';
import { transferPayload } from '../src/signer/transfer';
import type { Report } from '../src/signer/report';
import { benchConfig, makeBenchKeys } from './engine';
import { openBareClient, type BareSend } from './bare-client';
import { startLatencyProxy } from './latency-proxy';
import { startChainProcess } from './service-fixture';
import { percentile, type BenchLine } from './stats';

export const ONE_WAY_MS = 40;
export const BLOCK_MS = 400;
export const CONFIRM_AFTER_BLOCKS = 2;
const SIGN_ONLY_SIGNS = 60;
const SIGNS = 20;
const WARM_UP_SIGNS = 5;
/** The bare client's sends before its measured ones: they open its connections and find a block boundary. */
const BARE_WARM_UP_SENDS = 2;
/** How often the chain is asked directly whether a sent transaction is confirmed yet. */
const WATCH_MS = 5;

const operator = { kind: 'operator' } as const;

/** The client's request count, where this build has one (a build before it is measured by the proxy alone). */
type Counted = <T>(op: () => Promise<T>) => Promise<{ result: T; requests: number | null; beforeSend: number | null }>;
function requestCounting(): Counted {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- absent from builds before the count existed
    const { countRequests } = require('../src/rpc/request-count') as typeof import('../src/rpc/request-count');
    return async (op) => {
      const { result, tally } = await countRequests(op);
      return { result, requests: tally.requests, beforeSend: tally.beforeSend };
    };
  } catch {
    return async (op) => ({ result: await op(), requests: null, beforeSend: null });
  }
}

export async function runLatencyBench(): Promise<BenchLine[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-latency-'));
  const keyDir = path.join(dir, 'keys');
  const [key] = makeBenchKeys(keyDir, 1) as [KeyConfig];
  const chain = await startChainProcess(
    [{ address: key.pubkey, lamports: 1_000_000_000_000 }],
    BLOCK_MS,
    CONFIRM_AFTER_BLOCKS,
  );
  const proxy = await startLatencyProxy(chain.url, ONE_WAY_MS);
  const direct = new JsonRpcClient(chain.url, { timeoutMs: 5_000 });
  const config = benchConfig(dir, localCluster({ rpc_url: proxy.url, game_programs: [], player_profile: null }), [key]);
  const ledger = await openLedger(config.ledger);
  const engine = await openEngine(config, {
    chain: new JsonRpcClient(proxy.url, { timeoutMs: config.timings.rpc_timeout_ms }),
    ledger,
  });
  const counted = requestCounting();
  let n = 0;
  const payload = () =>
    transferPayload({ from: key.pubkey, to: key.transfer_to[0]!, lamports: 1_000_000 + n++, summary: 'bench' });
  const expectOutcome = (r: Report, outcome: Report['outcome']): void => {
    if (r.outcome !== outcome) throw new Error(`latency bench: ${r.outcome} (${r.detail ?? ''}), not ${outcome}`);
  };

  try {
    for (let i = 0; i < WARM_UP_SIGNS; i++) {
      expectOutcome(await engine.sign({ payload: payload(), mode: 'sign_only', principal: operator }), 'signed');
    }

    const signOnly: number[] = [];
    const signOnlyRequests: number[] = [];
    let proxied = proxy.requests();
    for (let i = 0; i < SIGN_ONLY_SIGNS; i++) {
      const t0 = performance.now();
      const { result, requests } = await counted(() =>
        engine.sign({ payload: payload(), mode: 'sign_only', principal: operator }),
      );
      signOnly.push(performance.now() - t0);
      expectOutcome(result, 'signed');
      if (requests !== null) signOnlyRequests.push(requests);
    }
    // The proxy also carries the watcher's polls of the sign-only transactions (about one a second).
    const proxiedPerSignOnly = (proxy.requests() - proxied) / SIGN_ONLY_SIGNS;

    const sign: number[] = [];
    const signChain: number[] = [];
    const lessChain: number[] = [];
    const signRequests: number[] = [];
    proxied = proxy.requests();
    for (let i = 0; i < SIGNS; i++) {
      let sentAt = 0;
      let sent: (signature: string) => void = () => {};
      // Chained here, before the sign starts, so the watch's requests are not counted as the sign's.
      const watching = new Promise<string>((resolve) => (sent = resolve)).then((signature) =>
        confirmedOnChain(direct, signature),
      );
      const t0 = performance.now();
      const { result, beforeSend } = await counted(() =>
        engine.sign({
          payload: payload(),
          principal: operator,
          onProgress: (p) => {
            if (p.stage !== 'sent' || sentAt !== 0) return;
            sentAt = performance.now();
            sent(p.signature);
          },
        }),
      );
      const total = performance.now() - t0;
      expectOutcome(result, 'confirmed');
      if (sentAt === 0) throw new Error('latency bench: the sign never reported its send');
      // The chain's own time: from the send's arrival (one way after it left) to the chain saying confirmed.
      const chainMs = (await watching) - (sentAt + ONE_WAY_MS);
      sign.push(total);
      signChain.push(chainMs);
      lessChain.push(total - chainMs);
      if (beforeSend !== null) signRequests.push(beforeSend);
    }
    const proxiedPerSign = (proxy.requests() - proxied) / SIGNS;

    // The baseline at the same distance: each measured send paced to wait as long for the chain as one of the signs.
    const bare = await openBareClient({
      url: proxy.url,
      keyFile: path.join(keyDir, `${key.name}.json`),
      to: key.transfer_to[0]!,
      oneWayMs: ONE_WAY_MS,
      blockMs: BLOCK_MS,
      confirmedOnChain: (signature) => confirmedOnChain(direct, signature),
    });
    const bareSends: BareSend[] = [];
    try {
      let last: BareSend | null = null;
      for (let i = 0; i < BARE_WARM_UP_SENDS; i++) last = await bare.send(BigInt(2_000_000 + i));
      for (const [i, chainMs] of signChain.entries()) {
        last = await bare.send(BigInt(3_000_000 + i), { boundaryAt: last!.confirmedAt, chainMs });
        bareSends.push(last);
      }
    } finally {
      bare.close();
    }
    const bareTotal = bareSends.map((s) => s.totalMs);
    const bareChain = bareSends.map((s) => s.chainMs);

    const rtt = 2 * ONE_WAY_MS;
    const setting = `${ONE_WAY_MS} ms each way, ${BLOCK_MS} ms blocks, confirmed after ${CONFIRM_AFTER_BLOCKS}`;
    const signOnlyP50 = percentile(signOnly, 50);
    const lessChainP50 = percentile(lessChain, 50);
    const signP50 = percentile(sign, 50);
    const bareP50 = percentile(bareTotal, 50);
    const overBare = signP50 - bareP50;
    const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
    return [
      {
        name: 'latency: sign_only p50',
        value: signOnlyP50,
        unit: 'ms',
        target: `≤ one round trip + 15 ms (${rtt + 15} ms)`,
        ok: signOnlyP50 <= rtt + 15,
        note: setting,
      },
      { name: 'latency: sign_only p99', value: percentile(signOnly, 99), unit: 'ms', note: `${SIGN_ONLY_SIGNS} signs` },
      { name: 'latency: sign p50', value: signP50, unit: 'ms', note: setting },
      { name: 'latency: sign p99', value: percentile(sign, 99), unit: 'ms', note: `${SIGNS} signs` },
      {
        name: "latency: sign p50 less the chain's confirmation time",
        value: lessChainP50,
        unit: 'ms',
        target: `≤ one round trip + 30 ms (${rtt + 30} ms)`,
        ok: lessChainP50 <= rtt + 30,
        note: `WebSocket notices, then the status read with the metadata; polls every ${config.timings.poll_interval_ms} ms as the fallback`,
      },
      {
        name: "latency: sign p99 less the chain's confirmation time",
        value: percentile(lessChain, 99),
        unit: 'ms',
      },
      {
        name: "latency: bare client's send-to-confirmed p50",
        value: bareP50,
        unit: 'ms',
        note: `@solana/kit through the same proxy, the notice alone; chain's confirmation p50 ${percentile(bareChain, 50).toFixed(0)} ms, the signs' ${percentile(signChain, 50).toFixed(0)} ms`,
      },
      {
        name: "latency: bare client's send-to-confirmed p99",
        value: percentile(bareTotal, 99),
        unit: 'ms',
        note: `${bareSends.length} sends, each paced to one sign's chain time`,
      },
      {
        name: "latency: bare client's send-to-confirmed p50 less the chain's",
        value: percentile(
          bareSends.map((s) => s.totalMs - s.chainMs),
          50,
        ),
        unit: 'ms',
        note: `the send's way there and the notice's way back: ${rtt} ms at this distance`,
      },
      {
        name: "latency: sign p50 less the bare client's send-to-confirmed p50",
        value: overBare,
        unit: 'ms',
        note: `${(overBare / rtt).toFixed(2)} round trips of ${rtt} ms; proposed target ≤ 2 round trips + 30 ms (${2 * rtt + 30} ms)`,
      },
      ...(signOnlyRequests.length > 0
        ? [
            {
              name: 'latency: HTTP requests per sign_only (client count)',
              value: mean(signOnlyRequests),
              unit: 'requests',
              note: `max ${Math.max(...signOnlyRequests)}`,
            },
            {
              name: 'latency: HTTP requests per sign before its send (client count)',
              value: mean(signRequests),
              unit: 'requests',
              note: `max ${Math.max(...signRequests)}`,
            },
          ]
        : []),
      {
        name: 'latency: HTTP requests per sign_only (proxy count)',
        value: proxiedPerSignOnly,
        unit: 'requests',
        note: 'with the watcher polls of the signed transactions',
      },
      {
        name: 'latency: HTTP requests per sign (proxy count)',
        value: proxiedPerSign,
        unit: 'requests',
        note: 'send and confirmation polls included',
      },
    ];
  } finally {
    await engine.close();
    direct.close();
    await proxy.close();
    await chain.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Asks the chain directly, every WATCH_MS, until `signature` is confirmed; the moment it first says so. */
async function confirmedOnChain(chain: JsonRpcClient, signature: string): Promise<number> {
  for (;;) {
    const [status] = await chain.getSignatureStatuses([signature], { searchTransactionHistory: false });
    const level = status?.confirmationStatus;
    if (level === 'confirmed' || level === 'finalized') return performance.now();
    await new Promise((r) => setTimeout(r, WATCH_MS));
  }
}
