/** What is sent resolves to the accounts that were checked. */
import { accountsChangedRefusal } from '../../../src/signer/policy/rules/lookup-tables';
import { randomAddress } from '../../support/payloads';

test('the same accounts in the same order pass; another order, length or account is refused', () => {
  const [a, b] = [randomAddress(), randomAddress()];
  expect(accountsChangedRefusal({ accountKeys: [a, b] }, { accountKeys: [a, b] })).toBeNull();
  for (const sent of [[b, a], [a], [a, b, randomAddress()], [a, randomAddress()]]) {
    expect(accountsChangedRefusal({ accountKeys: [a, b] }, { accountKeys: sent })).toMatchObject({
      reason: 'lookup_table_changed',
    });
  }
});
