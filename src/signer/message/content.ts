/**
 * What the bytes of a message payload are, read before anyone is asked to approve them: what a transaction decoder
 * makes of them, and an off-chain message's fields. The policy core judges the reading (the `message` check,
 * policy/rules/message-content.ts); what passes comes with the text an operator is shown and the audit log keeps.
 */
import type { ContentFacts } from '../policy/rules/message-content';
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

/** The facts for the policy, and the view of what would be signed (null: the bytes are refused as they are). */
export interface MessageRead {
  facts: ContentFacts;
  view: MessageView | null;
}

export function readMessage(payload: MessagePayload): MessageRead {
  const lookalike = transactionLookalike(payload.bytes);
  // Bytes a transaction decoder reads are never decoded as text: they are refused whatever format is claimed.
  if (lookalike) return { facts: { lookalike, offchain: null }, view: null };
  if (payload.format === 'text') {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(payload.bytes);
    return {
      facts: { lookalike: null, offchain: null },
      view: { text, describe: 'sign-in text (UTF-8)', signatories: null },
    };
  }
  const read = readOffchain(payload.bytes);
  if (!read.ok) return { facts: { lookalike: null, offchain: read }, view: null };
  const { view } = read;
  return {
    facts: { lookalike: null, offchain: { ok: true, signatories: view.signatories } },
    view: { text: view.text, describe: view.describe, signatories: view.signatories },
  };
}
