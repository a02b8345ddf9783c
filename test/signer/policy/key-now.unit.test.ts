/** A reload while the operators decided applies to what they decided. */
import { keyNowRefusal, messageKeyNowRefusal } from '../../../src/signer/policy/rules/key-now';
import { policyKey } from './fixtures';

test('a key still configured and not set to deny passes; removed or set to deny is refused', () => {
  const began = policyKey();
  expect(keyNowRefusal(began, began)).toBeNull();
  expect(keyNowRefusal(began, null)).toMatchObject({ reason: 'key_not_authorized' });
  expect(keyNowRefusal(began, { ...began, approval: 'deny' })).toMatchObject({ reason: 'key_set_to_deny' });
});

test("a message's key must also still sign messages", () => {
  const began = policyKey({ sign_messages: true });
  expect(messageKeyNowRefusal(began, began)).toBeNull();
  expect(messageKeyNowRefusal(began, { ...began, sign_messages: false })).toMatchObject({
    reason: 'messages_not_allowed',
    message: 'key "k" no longer signs messages (a reload turned it off)',
  });
  expect(messageKeyNowRefusal(began, null)).toMatchObject({ reason: 'key_not_authorized' });
});
