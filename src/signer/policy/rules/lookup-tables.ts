/**
 * A transaction prepared again before it is sent (a fresh blockhash, its lookup tables read again) must resolve to
 * the accounts that were checked: a lookup table changed in between would send accounts no check saw.
 */
import type { CompiledMessage } from '../../compile';
import { refusal, type Refusal } from '../../refusals';

export function accountsChangedRefusal(
  checked: Pick<CompiledMessage, 'accountKeys'>,
  sent: Pick<CompiledMessage, 'accountKeys'>,
): Refusal | null {
  const x = checked.accountKeys;
  const y = sent.accountKeys;
  if (x.length === y.length && x.every((k, i) => k === y[i])) return null;
  return refusal(
    'lookup_table_changed',
    'a lookup table changed between check and sign, so the accounts checked are not the accounts sent',
  );
}
