/** Sizes on the wire of what a key signs. */

/** The packet size a transaction must fit in on the wire. */
export const MAX_TRANSACTION_BYTES = 1232;

/** An Ed25519 signature. */
export const SIGNATURE_BYTES = 64;

/**
 * The most bytes a message may have: 1232, the off-chain format's own bound for a message a hardware wallet can
 * show in full (its formats 0 and 1). A key signs only what an operator can read whole, in `approvals list` and in
 * the audit entry, and a sign-in message with its resources is a few hundred bytes. Longer off-chain messages
 * (format 2, or version 1 past this size) are refused.
 */
export const MAX_MESSAGE_BYTES = 1232;
