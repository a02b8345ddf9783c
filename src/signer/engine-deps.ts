/** What the engine is built from: its config, the chain, the ledger, and where it reports. */
import type { SignatureNotices } from '../rpc/signature-notices';
import type { RpcClient } from '../rpc/types';
import type { SignerConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import type { Notifier } from '../notify/outbox';
import type { Policy } from './policy';
import type { Report } from './report';

export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

/** Something an operator must look at: logged by the engine, counted by the metrics (signer_alerts_total). */
export interface EngineAlert {
  kind: 'watch_unresolved' | 'spend_over_reservation';
  key: string;
  signature: string | null;
  detail: string;
}

/** Hooks for metrics: alerts, and what each poll of the sign-only watcher cost in RPC calls. */
export interface EngineObserver {
  alert(a: EngineAlert): void;
  watchPoll(cost: { listings: number; reads: number }): void;
}

export interface EngineDeps {
  config: SignerConfig;
  chain: RpcClient;
  ledger: Ledger;
  logger?: EngineLogger;
  /** The policy in force now (a reload replaces it); absent: the config's keys and tokens, fixed. */
  policy?: () => Policy;
  /** Observes every finished check/sign (metrics). */
  onReport?: (tool: 'check' | 'sign', report: Report, durationMs: number) => void;
  observer?: EngineObserver;
  /** Where events for webhooks are written; absent: the outbox of the ledger for `config.notify`'s hooks. */
  notifier?: Notifier;
  /** Pushed notices that a sent transaction landed; absent: from the cluster config; null: polling only. */
  notices?: SignatureNotices | null;
}
