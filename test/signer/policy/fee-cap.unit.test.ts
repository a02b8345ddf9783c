/** The fee cap (`max_fee_lamports`) on the most a message can pay in fees. */
import { feeCapRefusal } from '../../../src/signer/policy/rules/fee-cap';
import { policyKey } from './fixtures';

test('a fee bound equal to max_fee_lamports passes; one above is refused', () => {
  const key = policyKey({ max_fee_lamports: 10_000 });
  expect(feeCapRefusal(key, { base: 5_000, priority: 5_000, total: 10_000 })).toBeNull();
  expect(feeCapRefusal(key, { base: 5_000, priority: 5_001, total: 10_001 })).toMatchObject({
    check: 'limits',
    reason: 'fee_cap',
    figures: { requested: 10_001, cap: 10_000 },
  });
});

test('without max_fee_lamports any fee passes', () => {
  expect(feeCapRefusal(policyKey(), { base: 5_000, priority: 1e12, total: 1e12 + 5_000 })).toBeNull();
});
