/**
 * The figures every abuse class reports in the suite's summary line, measured the same way for each class that
 * runs the service in-process: requests it answered, how many were 5xx, the longest the service's event loop was
 * held (the suite's own work runs on the same loop, so this bounds the service's from above), how many bytes the ledger grew, and how many keys ended past their daily cap (which must be 0).
 */
import fs from 'node:fs';
import type http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { SignerConfig } from '../../../src/config/types';
import type { SignerEngine } from '../../../src/signer/types';
import { recordClassFigures } from './record';

export interface ClassTally {
  /** Records the class's figures; call once, when the service closes. */
  finish(): Promise<void>;
}

function ledgerBytes(config: SignerConfig): number {
  if (config.ledger.store !== 'sqlite') return 0;
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += fs.statSync(config.ledger.path + suffix).size;
    } catch {
      // not created yet
    }
  }
  return total;
}

export function tallyClass(suite: string, server: http.Server, config: SignerConfig, engine: SignerEngine): ClassTally {
  let requests = 0;
  let fiveXX = 0;
  const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.on('finish', () => {
      requests++;
      if (res.statusCode >= 500) fiveXX++;
    });
  };
  server.on('request', onRequest);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const bytesBefore = ledgerBytes(config);
  return {
    async finish() {
      loop.disable();
      server.off('request', onRequest);
      const views = await engine.keyShow({ principal: { kind: 'operator' } }).catch(() => []);
      recordClassFigures(suite, {
        requests,
        status_5xx: fiveXX,
        event_loop_max_ms: Math.round(loop.max / 1e5) / 10,
        ledger_bytes: Math.max(0, ledgerBytes(config) - bytesBefore),
        caps_passed: views.filter((v) => v.spent_or_reserved_24h > v.daily_lamport_cap).length,
      });
    },
  };
}
