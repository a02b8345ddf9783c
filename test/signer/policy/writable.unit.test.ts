/** With `writable_allow` set, only the key, its destinations and that list may be written. */
import { writableRefusal } from '../../../src/signer/policy/rules/writable';
import { randomAddress } from '../../support/payloads';
import { compiled, listed, policyKey } from './fixtures';

test('no writable_allow: anything may be written; with it, a stray writable account is refused', () => {
  const allowed = randomAddress();
  const stray = randomAddress();
  const open = policyKey();
  expect(writableRefusal(open, compiled([open.pubkey, stray], []))).toBeNull();
  const closed = policyKey({ writable_allow: [allowed] });
  expect(writableRefusal(closed, compiled([closed.pubkey, listed, allowed], []))).toBeNull();
  expect(writableRefusal(closed, compiled([closed.pubkey, allowed, stray], []))).toMatchObject({
    reason: 'writable_not_allowed',
    figures: { account: stray },
  });
  // The same account read-only is no door.
  expect(writableRefusal(closed, compiled([closed.pubkey, stray], [], { readonlyUnsigned: 1 }))).toBeNull();
});
