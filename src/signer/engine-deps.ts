/** What the engine is built from: its config, the chain, the ledger, and where it reports. */
import type { ChainClient } from '../chain/types';
import type { SignerConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import type { Policy } from './policy';
import type { Report } from './report';

export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

export interface EngineDeps {
  config: SignerConfig;
  chain: ChainClient;
  ledger: Ledger;
  logger?: EngineLogger;
  /** The policy in force now (a reload replaces it); absent: the config's keys and tokens, fixed. */
  policy?: () => Policy;
  /** Observes every finished check/sign (metrics). */
  onReport?: (tool: 'check' | 'sign', report: Report, durationMs: number) => void;
}
