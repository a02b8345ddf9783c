/** A message is signed by the key it names, and only by a key that signs messages. */
import { messageSignerRefusal, messagesOffRefusal } from '../../../src/signer/policy/rules/message-key';
import { randomAddress } from '../../support/payloads';
import { policyKey } from './fixtures';

test('no signer named, or the key itself, passes; another signer is refused', () => {
  const key = policyKey();
  const other = randomAddress();
  expect(messageSignerRefusal(key, null)).toBeNull();
  expect(messageSignerRefusal(key, key.pubkey)).toBeNull();
  expect(messageSignerRefusal(key, other)).toMatchObject({
    reason: 'message_signer_not_key',
    figures: { account: other },
  });
});

test('sign_messages must be on', () => {
  expect(messagesOffRefusal(policyKey({ sign_messages: true }), 'before')).toBeNull();
  expect(messagesOffRefusal(policyKey(), 'before')).toMatchObject({ reason: 'messages_not_allowed' });
  expect(messagesOffRefusal(policyKey({ sign_messages: false }), 'before')).toMatchObject({
    message: 'key "k" does not sign messages (sign_messages is off in its config; an operator can turn it on)',
  });
});
