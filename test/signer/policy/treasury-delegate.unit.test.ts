/** A treasury key signs only while every treasury account names it as delegate. */
import { treasuryDelegateRefusal } from '../../../src/signer/policy/rules/treasury-delegate';
import { randomAddress } from '../../support/payloads';
import { policyKey } from './fixtures';

test('every account delegated to the key passes; one revoked, delegated elsewhere or missing is refused', () => {
  const [a, b] = [randomAddress(), randomAddress()];
  const key = policyKey({ treasury: { owner: randomAddress(), accounts: [a, b], refill_below_percent: 20 } });
  const delegated = (account: string, delegate: string | null) => ({ account, delegate });
  expect(treasuryDelegateRefusal(policyKey(), [])).toBeNull();
  expect(treasuryDelegateRefusal(key, [delegated(a, key.pubkey), delegated(b, key.pubkey)])).toBeNull();
  expect(treasuryDelegateRefusal(key, [delegated(a, key.pubkey), delegated(b, null)])).toMatchObject({
    reason: 'treasury_delegate_revoked',
    figures: { account: b },
  });
  expect(treasuryDelegateRefusal(key, [delegated(a, randomAddress())])).toMatchObject({ figures: { account: a } });
  expect(treasuryDelegateRefusal(key, [delegated(a, key.pubkey)])).toMatchObject({ figures: { account: b } });
});
