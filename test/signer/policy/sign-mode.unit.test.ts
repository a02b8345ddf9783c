/** sign_only where the key allows it; a transaction another account pays for only as sign_only. */
import { foreignFeePayerModeRefusal, signOnlyRefusal } from '../../../src/signer/policy/rules/sign-mode';
import { randomAddress } from '../../support/payloads';
import { policyKey } from './fixtures';

test('sign_only is refused only for a key with sign_only: false; send always passes', () => {
  expect(signOnlyRefusal(policyKey(), 'sign_only')).toBeNull();
  expect(signOnlyRefusal(policyKey({ sign_only: true }), 'sign_only')).toBeNull();
  expect(signOnlyRefusal(policyKey({ sign_only: false }), 'sign_only')).toMatchObject({
    reason: 'sign_only_not_allowed',
  });
  expect(signOnlyRefusal(policyKey({ sign_only: false }), 'send')).toBeNull();
});

test('a foreign fee payer needs sign_only', () => {
  const key = policyKey();
  const payer = randomAddress();
  expect(foreignFeePayerModeRefusal(key, 'send', null)).toBeNull();
  expect(foreignFeePayerModeRefusal(key, 'sign_only', payer)).toBeNull();
  expect(foreignFeePayerModeRefusal(key, 'send', payer)).toMatchObject({
    reason: 'foreign_fee_payer_needs_sign_only',
    figures: { fee_payer: payer },
  });
});
