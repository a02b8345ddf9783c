/**
 * `BENCH_ONLY=confirm`: how long a sign waits from its send to `confirmed` on the embedded chain (400 ms blocks,
 * confirmed one block after landing), told by a WebSocket notice (signatureSubscribe) and by polling alone at the
 * default poll interval. One sign at a time, a few of each, so the section runs in well under a minute.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { localCluster } from '../src/config/clusters';
import { DEFAULT_TIMINGS } from '../src/config/types';
import { openEngine } from '../src/signer';
import { transferPayload } from '../src/signer/transfer';
import { benchConfig, makeBenchKeys } from './engine';
import { percentile, type BenchLine } from './stats';

const BLOCK_MS = 400;
const SIGNS = 10;

async function sendToConfirmed(subscriptions: boolean): Promise<number[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-confirm-'));
  const keyDir = path.join(dir, 'keys');
  const [key] = makeBenchKeys(keyDir, 1);
  if (!key) throw new Error('no bench key');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- LiteSVM is loaded only for the sections that use it
  const { startLocalnet } = require('../src/localnet/server') as typeof import('../src/localnet/server');
  const localnet = await startLocalnet({
    port: 0,
    blockIntervalMs: BLOCK_MS,
    fund: [{ address: key.pubkey, lamports: 1_000_000_000_000 }],
  });
  const config = benchConfig(
    dir,
    {
      ...localCluster({ rpc_url: localnet.url, game_programs: [], player_profile: null }),
      signature_subscriptions: subscriptions,
    },
    [key],
  );
  const engine = await openEngine(config);
  const waits: number[] = [];
  try {
    for (let i = 0; i < SIGNS; i++) {
      let sentAt = 0;
      const r = await engine.sign({
        payload: transferPayload({
          from: key.pubkey,
          to: key.transfer_to[0]!,
          lamports: 1_000_000 + i,
          summary: 'bench',
        }),
        principal: { kind: 'operator' },
        onProgress: (p) => {
          if (p.stage === 'sent') sentAt = performance.now();
        },
      });
      if (r.outcome !== 'confirmed') throw new Error(`confirm bench: a sign ended ${r.outcome}: ${r.detail ?? ''}`);
      waits.push(performance.now() - sentAt);
    }
  } finally {
    await engine.close();
    await localnet.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return waits;
}

export async function runConfirmBench(): Promise<BenchLine[]> {
  const pushed = await sendToConfirmed(true);
  const polled = await sendToConfirmed(false);
  const note = `${SIGNS} signs one at a time, ${BLOCK_MS} ms blocks, poll every ${DEFAULT_TIMINGS.poll_interval_ms} ms`;
  return [
    { name: 'confirm: send to confirmed p50, WebSocket notice', value: percentile(pushed, 50), unit: 'ms', note },
    { name: 'confirm: send to confirmed p50, polling only', value: percentile(polled, 50), unit: 'ms', note },
    { name: 'confirm: send to confirmed p99, WebSocket notice', value: percentile(pushed, 99), unit: 'ms' },
    { name: 'confirm: send to confirmed p99, polling only', value: percentile(polled, 99), unit: 'ms' },
  ];
}
