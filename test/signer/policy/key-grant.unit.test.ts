/** A token's refusals for keys it was not granted say nothing of whether such a key exists. */
import { keyNotGrantedRefusal, noKeyForFeePayerRefusal } from '../../../src/signer/policy/rules/key-grant';
import { formatMessage } from '../../../src/util/errors/messages';
import { randomAddress } from '../../support/payloads';

test('a name not granted gets the key_not_authorized error text; a fee payer not granted names only the pubkey', () => {
  expect(keyNotGrantedRefusal('treasury')).toMatchObject({
    check: 'authorized',
    reason: 'key_not_authorized',
    message: formatMessage('key_not_authorized', { key: 'treasury' }),
  });
  const payer = randomAddress();
  expect(noKeyForFeePayerRefusal(payer)).toMatchObject({
    reason: 'no_key_for_fee_payer',
    figures: { fee_payer: payer },
  });
});
