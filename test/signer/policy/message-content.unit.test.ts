/** What a message payload's bytes are, judged: never a transaction, an off-chain message naming the key. */
import { messageContentRefusal } from '../../../src/signer/policy/rules/message-content';
import { randomAddress } from '../../support/payloads';
import { policyKey } from './fixtures';

test('a sign-in text passes; bytes a transaction decoder reads are refused whatever else they are', () => {
  const key = policyKey();
  expect(messageContentRefusal(key, { lookalike: null, offchain: null })).toBeNull();
  expect(messageContentRefusal(key, { lookalike: 'a legacy transaction', offchain: null })).toMatchObject({
    check: 'message',
    reason: 'message_is_transaction',
  });
  const named = { ok: true as const, signatories: [key.pubkey] };
  expect(messageContentRefusal(key, { lookalike: 'a v0 transaction', offchain: named })).toMatchObject({
    reason: 'message_is_transaction',
  });
});

test('an off-chain message must keep its format and name the key among its signatories', () => {
  const key = policyKey();
  expect(messageContentRefusal(key, { lookalike: null, offchain: { ok: true, signatories: [key.pubkey] } })).toBeNull();
  expect(
    messageContentRefusal(key, { lookalike: null, offchain: { ok: true, signatories: [randomAddress()] } }),
  ).toMatchObject({ reason: 'not_a_signatory' });
  expect(messageContentRefusal(key, { lookalike: null, offchain: { ok: false, reason: 'bad header' } })).toMatchObject({
    reason: 'offchain_message_invalid',
    message: 'bad header',
  });
});
