/** A credential's checks after a message's approval: a spend of nothing, judged again. */
import { credentialMessageRefusal } from '../../../src/signer/policy/rules/credential';
import { policyKey } from './fixtures';

test('no credential or one that still allows passes; one that refuses now is a credential_limit of nothing', () => {
  const key = policyKey();
  expect(credentialMessageRefusal(undefined, key)).toBeNull();
  expect(credentialMessageRefusal(() => null, key)).toBeNull();
  const seen: unknown[] = [];
  const expired = (spend: unknown) => {
    seen.push(spend);
    return { message: 'the credential expired' };
  };
  expect(credentialMessageRefusal(expired, key)).toMatchObject({
    reason: 'credential_limit',
    message: 'after approval: the credential expired',
    figures: { requested: 0 },
  });
  expect(seen).toEqual([{ key: 'k', lamports_out: 0, destinations: [] }]);
});
