/**
 * What the policy in force now says of a pending approval's figures, for the operator about to decide: a reload
 * may have removed the key, a destination or a mint, or lowered a cap since the sign asked. The sign itself is
 * judged again after the decision (flow/after-approval.ts) and sends nothing such a policy refuses; this tells the
 * approver beforehand, from the figures the request recorded, with the same rules.
 */
import type { KeyConfig } from '../../config/types';
import type { ApprovalRecord, HaltRecord, Usage } from '../../ledger/types';
import { spendOf } from '../../ledger/usage-book';
import { SYSTEM_PROGRAM } from '../programs';
import { refusal, type Refusal } from '../refusals';
import { tokenCapRefusal, tokenDestinationRefusal, unlistedMintRefusal, type MintFlow } from '../spl-tokens/policy';
import { destinationRefusal } from './destinations';
import { haltRefusal } from './halted';
import { limitsRefusal } from './limits';

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
  if (key === null) return refusal('key_not_authorized', `key "${approval.key}" is no longer in the policy`);
  if (halt) return haltRefusal(halt);
  if (key.approval === 'deny') return refusal('key_set_to_deny', `key "${key.name}" is set to deny`);
  // A message moves nothing: the key's own state is all the policy judges of it here.
  if (approval.message !== undefined && approval.message !== null) return null;

  const gains = (approval.destinations ?? []).map((d) => ({
    address: d.address,
    lamports: d.lamports,
    // A request recorded without these is judged as a payment to a wallet, the stricter reading.
    created: d.created ?? false,
    owner: d.owner ?? SYSTEM_PROGRAM,
  }));
  const destination = destinationRefusal(key, gains);
  if (destination) return destination;

  const spend = approval.balance_change === null ? null : spendOf(approval.balance_change);
  const limits = limitsRefusal(key, usage, spend);
  if (limits) return limits;

  const decimals = new Map((approval.tokens ?? []).map((t) => [t.mint, t.decimals]));
  const flows: MintFlow[] = (approval.tokens ?? []).map((t) => ({
    mint: t.mint,
    keyChange: BigInt(t.change),
    credits: new Map(t.credits.map((c) => [c.owner, BigInt(c.amount)])),
  }));
  for (const flow of flows) {
    if (flow.keyChange >= 0n) continue;
    const policy = (key.tokens ?? []).find((p) => p.mint === flow.mint);
    const places = decimals.get(flow.mint) ?? null;
    if (!policy) return unlistedMintRefusal(flow.mint, -flow.keyChange, places);
    const tokenDestination = tokenDestinationRefusal(key, policy, flow, places);
    if (tokenDestination) return tokenDestination;
  }
  return tokenCapRefusal(key, { mints: flows }, (mint) => decimals.get(mint) ?? null, usage.tokens);
}
