/**
 * Whether bytes offered as a message would also be read as a transaction. A signature over a transaction
 * message is a signature on that transaction, whatever the request called it: this is how a signer is tricked
 * into paying by "signing a message". So the bytes are tried with kit's own decoders, as a compiled transaction
 * message (legacy, v0 or any version kit knows) and as a whole wire transaction, and any success is a refusal.
 *
 * A prefix counts: the runtime reads a message from a packet and may leave bytes after it unread, so bytes that
 * merely begin with a transaction are refused too. An off-chain message starts with 0xff, which no transaction
 * message does; UTF-8 text never contains 0xff, but short text can still be made to parse, so it is tried as well.
 */
import { getCompiledTransactionMessageDecoder } from '@solana/transaction-messages';
import { getTransactionDecoder } from '@solana/transactions';

/** What the bytes would be read as ("a legacy transaction message", ...), or null when they are no transaction. */
export function transactionLookalike(bytes: Uint8Array): string | null {
  try {
    const [message] = getCompiledTransactionMessageDecoder().read(bytes, 0);
    const version = message.version === 'legacy' ? 'legacy' : `v${message.version}`;
    return `a ${version} transaction message`;
  } catch {
    // Not a transaction message: try it as a whole transaction next.
  }
  try {
    getTransactionDecoder().read(bytes, 0);
    return 'a wire transaction (signatures and a message)';
  } catch {
    return null;
  }
}
