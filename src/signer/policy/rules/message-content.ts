/**
 * What the bytes of a message payload are, judged before anyone is asked to approve them (the `message` check):
 * bytes a transaction decoder reads are refused whatever format the payload claims; an off-chain message must keep
 * its format's rules and name the key among its required signatories. The decoding is message/content.ts's.
 */
import type { KeyConfig } from '../../../config/types';
import { refusal, type Refusal } from '../../refusals';

export interface ContentFacts {
  /** What a transaction decoder reads the bytes as; null: not a transaction. */
  lookalike: string | null;
  /** An off-chain message's reading: its signatories, or why it breaks its format; null: a sign-in text. */
  offchain: { ok: true; signatories: readonly string[] } | { ok: false; reason: string } | null;
}

export function messageContentRefusal(key: KeyConfig, f: ContentFacts): Refusal | null {
  if (f.lookalike !== null) {
    return refusal(
      'message_is_transaction',
      `these bytes decode as ${f.lookalike}: signing them would sign a transaction, so they are never signed as a message`,
    );
  }
  if (f.offchain === null) return null;
  if (!f.offchain.ok) return refusal('offchain_message_invalid', f.offchain.reason);
  if (!f.offchain.signatories.includes(key.pubkey)) {
    return refusal(
      'not_a_signatory',
      `key "${key.name}" (${key.pubkey}) is not among the off-chain message's required signatories (${f.offchain.signatories.join(', ')})`,
    );
  }
  return null;
}
