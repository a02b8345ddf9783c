/** A spend the simulation does not bound is refused, never judged as free. */
import { spendUnknownRefusal, UNREPORTED_BALANCE } from '../../../src/signer/policy/rules/spend-unknown';

test('refused as spend_unknown with what was missing', () => {
  expect(spendUnknownRefusal()).toMatchObject({
    check: 'limits',
    reason: 'spend_unknown',
    message: UNREPORTED_BALANCE,
  });
  expect(spendUnknownRefusal('the balances moved')).toMatchObject({ message: 'the balances moved' });
});
