/**
 * What the policy in force now says of a pending approval's figures, for the operator about to decide: a reload
 * may have removed the key, a destination or a mint, or lowered a cap since the sign asked. The sign itself is
 * judged again after the decision (flow/after-approval.ts) and sends nothing such a policy refuses; this tells the
 * approver beforehand, from the figures the request recorded, with the same rules.
 */
import type { KeyConfig } from '../../config/types';
import type { ApprovalRecord, HaltRecord, Usage } from '../../ledger/types';
import type { Refusal } from '../refusals';
import { decide } from '../policy/decide';
import { keyGoneRefusal } from '../policy/rules/key';

type Pending = Pick<ApprovalRecord, 'key' | 'balance_change' | 'tokens' | 'destinations' | 'message'>;

/**
 * The refusal the current policy would give the request's figures: `key` is the request's key in the policy now
 * (null: no longer configured), `usage` and `halt` the key's as the ledger holds them now.
 */
export function policyNowRefusal(
  key: KeyConfig | null,
  approval: Pending,
  usage: Usage,
  halt: HaltRecord | null,
): Refusal | null {
  if (key === null) return keyGoneRefusal(approval.key);
  const verdict = decide(key, { at: 'pending', approval, usage, halt });
  return verdict.outcome === 'refused' ? verdict.refusal : null;
}
