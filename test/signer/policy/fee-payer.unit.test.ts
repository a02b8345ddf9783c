/** The fee payer is the key: the payload's, and the prepared message's first account. */
import { feePayerRefusal, payloadFeePayerRefusal } from '../../../src/signer/policy/rules/fee-payer';
import { randomAddress } from '../../support/payloads';
import { compiled, policyKey } from './fixtures';

test("the payload's fee payer is the key, or another one only where the source allows it", () => {
  const key = policyKey();
  const other = randomAddress();
  expect(payloadFeePayerRefusal(key, key.pubkey, false)).toBeNull();
  expect(payloadFeePayerRefusal(key, other, true)).toBeNull();
  expect(payloadFeePayerRefusal(key, other, false)).toMatchObject({
    check: 'fee_payer',
    reason: 'fee_payer_not_key',
    figures: { fee_payer: other },
  });
});

test("the message's first account is the key or the foreign fee payer; no account at all is refused", () => {
  const key = policyKey();
  const other = randomAddress();
  expect(feePayerRefusal(key, compiled([key.pubkey], []), null)).toBeNull();
  expect(feePayerRefusal(key, compiled([other], []), other)).toBeNull();
  expect(feePayerRefusal(key, compiled([other], []), null)).toMatchObject({ reason: 'fee_payer_not_key' });
  expect(feePayerRefusal(key, compiled([], []), null)).toMatchObject({ reason: 'no_accounts' });
});
