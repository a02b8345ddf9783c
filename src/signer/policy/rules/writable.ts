/**
 * With `writable_allow` set, the accounts a transaction may write are the key's own, its `transfer_to` and that
 * list: an operator who knows exactly what an agent touches can close every other door. Refused as a destination,
 * since a writable account is where value can go.
 */
import type { KeyConfig } from '../../../config/types';
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';
import { writableAccounts } from '../../writable-accounts';

export function writableRefusal(key: KeyConfig, msg: CompiledMessage): Refusal | null {
  if (key.writable_allow === undefined || key.writable_allow === null) return null;
  const allowed = new Set([key.pubkey, ...key.transfer_to, ...key.writable_allow]);
  const stray = writableAccounts(msg).find((a) => !allowed.has(a));
  if (stray === undefined) return null;
  return refusal(
    'writable_not_allowed',
    `the transaction writes ${stray}, which is neither the key, one of its transfer_to, nor in its writable_allow`,
    { account: stray },
  );
}
