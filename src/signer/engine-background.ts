/**
 * What the engine runs beside its requests: the watcher of sign-only and orphaned transactions (resumed from the
 * ledger at start, and looked for again on a cadence), the treasury reconciliation passes, and the look for spends
 * a failover lost.
 */
import type { SignatureNotices } from '../rpc/notice-types';
import type { RpcClient } from '../rpc/types';
import type { SignerConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import type { Notifier } from '../notify/outbox';
import { createTreasuryReconciler, type TreasuryReconciler } from '../treasury/reconcile';
import { errorMessage } from '../util/errors';
import { nowSeconds } from '../util/time';
import type { EngineLogger } from './engine-deps';
import type { TripwireDeps } from './flow/tripwire';
import { watchFailovers } from './flow/failover-spends';
import { createSignedWatcher, type SignedWatcher } from './flow/watch-signed';
import type { HaltBook } from './halts';
import type { Policy } from './policy';

export interface BackgroundDeps {
  config: SignerConfig;
  chain: RpcClient;
  ledger: Ledger;
  halts: HaltBook;
  notifier: Notifier;
  log: EngineLogger;
  policy: () => Policy;
  tripwire: TripwireDeps;
  notices: SignatureNotices | null;
}

export interface Background {
  watcher: SignedWatcher;
  treasuries: TreasuryReconciler;
  /** Stops the timers and waits for the passes and the watcher under way. */
  close(): Promise<void>;
}

export function startBackground(deps: BackgroundDeps): Background {
  const { config, chain, ledger, halts, log, policy } = deps;
  const notifier = deps.notifier;
  const treasuries = createTreasuryReconciler({
    keys: () => policy().keys,
    chain,
    audit: ledger,
    baselines: ledger,
    halts,
    notify: notifier,
    now: nowSeconds,
    prices: () => config.prices,
  });
  let reconciling = false;
  // Only a process with treasury keys at start runs the passes; a reload that adds the first one needs a restart.
  const reconcileTimer = policy().keys.some((k) => k.treasury !== undefined)
    ? setInterval(() => {
        // A pass still running (a slow RPC) is not overlapped: the next tick starts the next one.
        if (reconciling) return;
        reconciling = true;
        treasuries
          .reconcile()
          .catch((e: unknown) => {
            log.warn(
              { err: errorMessage(e) },
              'treasury reconciliation could not read the chain or the ledger; next pass retries',
            );
          })
          .finally(() => (reconciling = false));
      }, config.timings.treasury_reconcile_ms)
    : null;
  reconcileTimer?.unref();
  const watcher = createSignedWatcher({
    chain,
    ledger,
    timings: config.timings,
    log,
    tripwire: deps.tripwire,
    notices: deps.notices,
  });
  const resumed = watcher
    .resume(config.keys)
    .then((n) => {
      if (n > 0) log.info({ signatures: n }, 'watching transactions left without a final entry by an earlier run');
    })
    .catch((e: unknown) => log.error({ err: errorMessage(e) }, 'pending transactions could not be resumed'));
  // Another process's intents (a replica killed, a commit cut by a failover) are looked for again on a cadence, not
  // only at start: a long-running replica would otherwise leave their reservations charged until a restart. Ending
  // one twice is harmless: its final entry is written under the key's lock, once.
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepTimer = setInterval(() => {
    sweeping = Promise.all([resumed, sweeping])
      .then(() => watcher.resume(policy().keys, { orphansOnly: true }))
      .then((n) => {
        if (n > 0) log.info({ signatures: n }, 'watching transactions another process left without a final entry');
      })
      .catch((e: unknown) => log.warn({ err: errorMessage(e) }, 'the look for orphaned transactions failed'));
  }, config.timings.orphan_sweep_ms);
  sweepTimer.unref();
  // After a failover, landed spends the ledger lost with the former primary halt their keys (docs/ledger.md).
  const failovers = watchFailovers({
    chain,
    ledger,
    tripwire: deps.tripwire,
    keys: () => policy().keys,
    timings: config.timings,
  });

  return {
    watcher,
    treasuries,
    async close() {
      if (reconcileTimer !== null) clearInterval(reconcileTimer);
      clearInterval(sweepTimer);
      await failovers.close();
      await resumed;
      await sweeping;
      await watcher.close();
    },
  };
}
