/**
 * Before a treasury key signs: every treasury account must still name the key as its delegate. The owner may
 * revoke or hand the allowance to someone else at any time; until the planned allowance is approved again, the
 * key's caps and the chain's no longer describe the same money, so signs are refused with a coded reason. The
 * flow reads the accounts from the chain at each sign (so every replica sees the owner's change at once); this
 * judges what it read.
 */
import type { KeyConfig } from '../../../config/types';
import type { TreasuryAccountState } from '../../../treasury/read';
import { refusal, type Refusal } from '../../refusals';

/** `states`: the key's treasury accounts that are token accounts on chain (one missing is closed or not one). */
export function treasuryDelegateRefusal(
  key: KeyConfig,
  states: readonly Pick<TreasuryAccountState, 'account' | 'delegate'>[],
): Refusal | null {
  for (const account of key.treasury?.accounts ?? []) {
    const s = states.find((x) => x.account === account);
    if (s === undefined) {
      return refusal(
        'treasury_delegate_revoked',
        `treasury account ${account} of key "${key.name}" is not a token account on chain (closed?); the owner must fund and approve it again`,
        { account },
      );
    }
    if (s.delegate !== key.pubkey) {
      const now = s.delegate === null ? 'no delegate (revoked)' : `delegate ${s.delegate}`;
      return refusal(
        'treasury_delegate_revoked',
        `treasury account ${account} of key "${key.name}" has ${now}, not the key; the owner must approve the planned allowance again (sa-forge-signer treasury plan ${key.name})`,
        { account },
      );
    }
  }
  return null;
}
