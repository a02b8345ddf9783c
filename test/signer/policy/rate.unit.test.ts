/** The rate limit: signs in the last minute against `rate_limit_per_minute`. */
import { rateRefusal } from '../../../src/signer/policy/rules/rate';
import { policyKey } from './fixtures';

const key = policyKey({ rate_limit_per_minute: 3 });

test('below the rate a sign passes; at it the next one is refused, with the count and the cap', () => {
  expect(rateRefusal(key, { signsLastMinute: 2 })).toBeNull();
  expect(rateRefusal(key, { signsLastMinute: 3 })).toEqual({
    check: 'limits',
    reason: 'rate_limit',
    figures: { signs_last_minute: 3, cap: 3 },
    message: 'rate limit: 3 signs in the last minute',
  });
});
