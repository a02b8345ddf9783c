/**
 * The resolved configuration every module receives. `src/config/load.ts` (convict) builds it from a YAML/JSON
 * file plus SIGNER_* env vars, resolves relative paths against the config file's folder and cross-checks it;
 * tests build it directly. Amounts are lamports (integers), durations milliseconds. Each section's type is derived
 * from its schema in src/config/sections/; this file only gathers them.
 */
import type { ClusterProfile } from './sections/cluster-profile';
import type { KeyConfig } from './sections/keys';
import type { KeyStoresConfig } from './sections/key-stores';
import type { LedgerConfig } from './sections/ledger';
import type { LocalnetConfig } from './sections/localnet';
import type { LogLevel } from './sections/logging';
import type { NotifyConfig } from './sections/notify';
import type { OperatorConfig } from './sections/operators';
import type { PricesConfig } from './sections/prices';
import type { ServeConfig } from './sections/serve';
import type { Timings } from './sections/timings';

export type { ListenAddress } from './formats';
export { type ClusterCommitment, type ClusterProfile, type ProgramEntry } from './sections/cluster-profile';
export {
  KEY_STORE_KINDS,
  type ApprovalMode,
  type KeyApprovals,
  type KeyClass,
  type KeyConfig,
  type KeyStoreKind,
} from './sections/keys';
export { type TokenPolicy } from './sections/key-tokens';
export { type TreasuryConfig } from './sections/key-treasury';
export {
  type EncryptedStoreConfig,
  type KeyStoresConfig,
  type Pkcs11StoreConfig,
  type SecretRef,
} from './sections/key-stores';
export { type LedgerConfig } from './sections/ledger';
export { type FundEntry, type LocalnetConfig } from './sections/localnet';
export { type LogLevel } from './sections/logging';
export {
  NOTIFY_DELIVERY_DEFAULTS,
  NOTIFY_EVENTS,
  type NotifyConfig,
  type NotifyDelivery,
  type NotifyEvent,
  type NotifyFormat,
  type NotifyHook,
} from './sections/notify';
export { OPERATOR_ROLES, type OperatorConfig, type OperatorRole } from './sections/operators';
export { type PricesConfig } from './sections/prices';
export { type KeyUsdCaps } from './sections/key-usd';
export { type OperatorListenerConfig } from './sections/operator-console';
export { DEFAULT_SOCKET_LIMITS, type ServeConfig } from './sections/serve';
export { type TokenConfig } from './sections/bearer-tokens';
export { type CredentialRootKey, type CredentialsConfig, type IssuedCredentialConfig } from './sections/credentials';
export { type BiscuitRootKeyConfig } from './sections/key-biscuit-root';
export { DEFAULT_TIMINGS, type Timings } from './sections/timings';
export { TOKEN_OPS, type TokenOp } from './sections/token-ops';

export interface SignerConfig {
  /** The config file this came from (null when built in code). */
  source: string | null;
  cluster: ClusterProfile;
  key_dir: string;
  state_dir: string;
  /** Sorted by name. */
  keys: KeyConfig[];
  /**
   * Named operators (they vote on approvals and log in to the console); absent or empty: the host's single operator
   * decides (`approvals approve` without --as).
   */
  operators?: OperatorConfig[];
  /** Settings of the `encrypted` and `pkcs11` stores; absent means every key is a `file` key. */
  key_stores?: KeyStoresConfig;
  ledger: LedgerConfig;
  timings: Timings;
  serve: ServeConfig;
  /** `cluster: local` only: run the embedded chain in-process. */
  localnet: LocalnetConfig | null;
  log_level: LogLevel;
  /** Webhooks and how they are delivered; absent: none. */
  notify?: NotifyConfig;
  /** Where `usd` caps get their prices (docs/pricing.md); absent: no prices, so no key may have `usd` caps. */
  prices?: PricesConfig;
}
