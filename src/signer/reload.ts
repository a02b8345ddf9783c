/**
 * Reload in place (docs/policy.md, "Reload"): the config is read again and validated completely — the same
 * checks as at start, key files and mints on the chain included — before anything changes. A config that fails,
 * or that changes a setting only a restart may change, changes nothing and the answer says why. One that passes
 * is recorded in the audit log (the policy hashes, old and new, and what changed) and then replaces the policy:
 * every sign that begins afterwards is judged by it; signs already under way finish under the one they began with.
 */
import type { RpcClient } from '../rpc/types';
import type { SignerConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import { errorMessage } from '../util/errors';
import { nowSeconds } from '../util/time';
import type { EngineLogger } from './engine-deps';
import { policyFor, type Policy, type PolicyHolder } from './policy';
import { policyProblems } from './policy-check';
import {
  bearerTokenChanges,
  credentialChanges,
  hookChanges,
  operatorChanges,
  policyChanges,
  priceChanges,
  restartOnlyChanges,
} from './policy-diff';

export interface ReloadResult {
  /** applied: the new policy runs; unchanged: the config's policy is the one running; refused: nothing changed. */
  status: 'applied' | 'unchanged' | 'refused';
  message: string;
  old_hash: string;
  new_hash: string | null;
  changes: string[];
}

export interface ReloadDeps {
  /** Reads and validates the config file again (throws config_invalid with the reason). */
  load(): SignerConfig;
  /** The config as loaded at start: the settings a reload may not change are compared with it. */
  started: SignerConfig;
  holder: PolicyHolder;
  chain: RpcClient;
  ledger: Ledger;
  log: EngineLogger;
  /**
   * What else the new policy needs before it may take over (the service reads the webhooks' signing secrets here):
   * throws to refuse the reload; returns what to do once the policy has taken over.
   */
  prepare?: (next: Policy) => () => void;
}

/** The audit entry's key: a reload concerns every key. */
export const RELOAD_AUDIT_KEY = '*';

export async function reloadPolicy(deps: ReloadDeps): Promise<ReloadResult> {
  const old = deps.holder.current();
  const refused = (message: string, newHash: string | null = null, changes: string[] = []): ReloadResult => ({
    status: 'refused',
    message: `reload refused, nothing changed: ${message}`,
    old_hash: old.hash,
    new_hash: newHash,
    changes,
  });
  let next: SignerConfig;
  try {
    next = deps.load();
  } catch (e) {
    return refused(errorMessage(e));
  }
  const restart = restartOnlyChanges(deps.started, next);
  if (restart.length > 0)
    return refused(
      `${restart.join(', ')} ${restart.length === 1 ? 'needs' : 'need'} a restart (a reload changes keys, prices, serve.tokens, serve.credentials' issued and revoked lists, operators and notify.hooks only); put ${restart.length === 1 ? 'it' : 'them'} back, or restart the service to apply ${restart.length === 1 ? 'it' : 'them'}`,
    );
  const policy = policyFor(next, old.keyStores);
  const changes = [
    ...policyChanges(old.keys, policy.keys),
    ...bearerTokenChanges(old.tokens, policy.tokens),
    ...credentialChanges(old.credentials, policy.credentials),
    ...operatorChanges(old.operators, policy.operators),
    ...hookChanges(old.hooks, policy.hooks),
    ...priceChanges(old.prices, policy.prices),
  ];
  if (policy.hash === old.hash)
    return {
      status: 'unchanged',
      message: 'the policy is unchanged',
      old_hash: old.hash,
      new_hash: policy.hash,
      changes,
    };
  const problems = await policyProblems(policy, deps.chain);
  if (problems.length > 0)
    return refused(problems.map((p) => `key "${p.key}": ${p.message}`).join('; '), policy.hash, changes);
  let takenOver: () => void = () => {};
  try {
    takenOver = deps.prepare?.(policy) ?? takenOver;
  } catch (e) {
    return refused(errorMessage(e), policy.hash, changes);
  }
  // Recorded first: a policy the audit log does not know of never judges a sign.
  try {
    await deps.ledger.append({
      ts: nowSeconds(),
      key: RELOAD_AUDIT_KEY,
      command: 'reload',
      payload_hash: '',
      programs: [],
      summary: changes.join('; '),
      intent: null,
      outcome: 'reloaded',
      detail: `policy ${old.hash} → ${policy.hash}${next.source === null ? '' : ` from ${next.source}`}`,
      signature: null,
      slot: null,
      balance_change: null,
    });
  } catch (e) {
    return refused(`the audit log could not record the reload: ${errorMessage(e)}`, policy.hash, changes);
  }
  deps.holder.replace(policy);
  takenOver();
  deps.log.info({ old_hash: old.hash, new_hash: policy.hash, changes }, 'policy reloaded');
  return {
    status: 'applied',
    message: `policy ${policy.hash} applied: ${changes.length === 0 ? 'no key, token, operator or hook changed' : changes.join('; ')}`,
    old_hash: old.hash,
    new_hash: policy.hash,
    changes,
  };
}
