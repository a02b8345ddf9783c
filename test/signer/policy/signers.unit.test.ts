/** Who signs, and partial signers that must be new accounts. */
import { partialSignerExistsRefusal, signersRefusal } from '../../../src/signer/policy/rules/signers';
import { randomAddress } from '../../support/payloads';
import { compiled, policyKey } from './fixtures';

test('a partial signer must be a required signer other than the key; every required signer must be covered', () => {
  const key = policyKey();
  const partial = randomAddress();
  const payer = randomAddress();
  const two = compiled([key.pubkey, partial], [], { signers: 2 });
  expect(signersRefusal(key, two, [partial], null)).toBeNull();
  expect(signersRefusal(key, two, [], null)).toMatchObject({
    reason: 'required_signer_unavailable',
    figures: { account: partial },
  });
  expect(signersRefusal(key, two, [key.pubkey], null)).toMatchObject({ reason: 'partial_signer_is_key' });
  const stray = randomAddress();
  expect(signersRefusal(key, two, [partial, stray], null)).toMatchObject({
    reason: 'partial_signer_not_required',
    figures: { account: stray },
  });
  // A foreign fee payer signs after the key: it need not be a partial signer.
  expect(signersRefusal(key, compiled([payer, key.pubkey], [], { signers: 2 }), [], payer)).toBeNull();
});

test('the first partial signer that already exists on chain is refused', () => {
  const [a, b] = [randomAddress(), randomAddress()];
  expect(partialSignerExistsRefusal([], [])).toBeNull();
  expect(partialSignerExistsRefusal([a, b], [false, false])).toBeNull();
  expect(partialSignerExistsRefusal([a, b], [false, true])).toMatchObject({
    reason: 'partial_signer_exists',
    figures: { account: b },
  });
});
