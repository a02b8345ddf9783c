/**
 * The `message` check: what the bytes of a message payload are, judged before anyone is asked to approve them.
 * Bytes a transaction decoder reads are refused whatever format the payload claims; an off-chain message must
 * keep its format's rules and name the key among its required signatories. What passes comes with the text an
 * operator is shown and the audit log keeps.
 */
import type { KeyConfig } from '../../config/types';
import { refusal, type Refusal } from '../refusals';
import { readOffchain } from './offchain';
import type { MessagePayload } from './payload';
import { transactionLookalike } from './transaction-lookalike';

export interface MessageView {
  /** The text that is signed (the off-chain message's content, or the sign-in text): untrusted. */
  text: string;
  /** One line of what is signed, for the audit entry ("sign-in text", "off-chain message v0 (...) for ..."). */
  describe: string;
  /** The off-chain message's required signatories; null for a text. */
  signatories: string[] | null;
}

export type Judged = { ok: true; view: MessageView } | { ok: false; refusal: Refusal };

const refused = (
  reason: 'message_is_transaction' | 'offchain_message_invalid' | 'not_a_signatory',
  message: string,
): Judged => ({
  ok: false,
  refusal: refusal(reason, message),
});

export function judgeMessage(payload: MessagePayload, key: KeyConfig): Judged {
  const lookalike = transactionLookalike(payload.bytes);
  if (lookalike) {
    return refused(
      'message_is_transaction',
      `these bytes decode as ${lookalike}: signing them would sign a transaction, so they are never signed as a message`,
    );
  }
  if (payload.format === 'text') {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload.bytes);
    return { ok: true, view: { text, describe: 'sign-in text (UTF-8)', signatories: null } };
  }
  const read = readOffchain(payload.bytes);
  if (!read.ok) return refused('offchain_message_invalid', read.reason);
  const { view } = read;
  if (!view.signatories.includes(key.pubkey)) {
    return refused(
      'not_a_signatory',
      `key "${key.name}" (${key.pubkey}) is not among the off-chain message's required signatories (${view.signatories.join(', ')})`,
    );
  }
  return { ok: true, view: { text: view.text, describe: view.describe, signatories: view.signatories } };
}
