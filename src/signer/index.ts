/** Opens the engine on its real parts: the chain's JSON-RPC endpoint and the configured ledger store. */
import type { SignerConfig } from '../config/types';
import { chainClientFor } from '../rpc/for-cluster';
import type { RpcClient } from '../rpc/types';
import { openLedger } from '../ledger/open';
import type { Ledger } from '../ledger/types';
import { SignerError } from '../util/errors';
import { createEngine, type EngineDeps, type EngineLogger } from './engine';
import { policyFor, type Policy } from './policy';
import { mintProblems } from './policy-check';
import type { SignerEngine } from './types';

export interface OpenEngineOptions {
  logger?: EngineLogger;
  onReport?: EngineDeps['onReport'];
  observer?: EngineDeps['observer'];
  /** Where events for webhooks go (the service's outbox, which wakes its deliverer); absent: one made from config. */
  notifier?: EngineDeps['notifier'];
  /** Parts already opened by the caller (tests, the CLI reusing a ledger). */
  chain?: RpcClient;
  ledger?: Ledger;
  /** The policy in force now, when a reload may replace it (the service); absent: the config's, fixed. */
  policy?: () => Policy;
  /** Check at open that every mint of the policy is on the chain (the service; a CLI command skips the read). */
  checkMints?: boolean;
  /**
   * Refuse to open when a key file cannot be used or a mint is not on the chain (the serve `--strict` flag);
   * otherwise it is logged. An encrypted or pkcs11 key that cannot be opened always refuses the open.
   */
  strictKeys?: boolean;
}

export async function openEngine(config: SignerConfig, opts: OpenEngineOptions = {}): Promise<SignerEngine> {
  const chain = opts.chain ?? chainClientFor(config.cluster, config.timings);
  let resolved = config;
  if (config.cluster.genesis_hash === null) {
    // Only the embedded chain has no fixed genesis: pin the one it reports now, so a later swap is caught.
    resolved = { ...config, cluster: { ...config.cluster, genesis_hash: await chain.getGenesisHash() } };
  }
  const ledger = opts.ledger ?? (await openLedger(config.ledger));
  const engine = createEngine({
    config: resolved,
    chain,
    ledger,
    logger: opts.logger,
    onReport: opts.onReport,
    policy: opts.policy,
    ...(opts.observer === undefined ? {} : { observer: opts.observer }),
    ...(opts.notifier === undefined ? {} : { notifier: opts.notifier }),
  });
  const keyProblems = await engine.verifyKeys();
  // The same checks a reload makes (signer/policy-check.ts); here a problem is logged unless --strict.
  const problems = [
    ...keyProblems,
    ...(opts.checkMints === true || opts.strictKeys === true
      ? await mintProblems(opts.policy?.() ?? policyFor(config), chain)
      : []),
  ];
  for (const p of problems) opts.logger?.error({ key: p.key, err: p.message }, `key "${p.key}" cannot sign`);
  // A file key's problem is often a file not copied yet, so it is logged and /ready stays false; an encrypted or
  // HSM key that does not open is a wrong passphrase, PIN, token or key, which no wait fixes: the start stops.
  const fatal = keyProblems.filter((p) => p.store !== 'file');
  if (fatal.length > 0) {
    await engine.close();
    throw new SignerError('key_store', fatal.map((p) => `key "${p.key}" (${p.store} store): ${p.message}`).join('; '));
  }
  if (opts.strictKeys === true && problems.length > 0) {
    await engine.close();
    throw new SignerError('key_file', `--strict: ${problems.map((p) => `key "${p.key}": ${p.message}`).join('; ')}`);
  }
  return engine;
}

export type { SignerEngine } from './types';
export type { KeyProblem } from '../keys/key-set';
export { createEngine } from './engine';
