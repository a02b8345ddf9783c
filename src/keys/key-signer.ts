/**
 * What every key store hands the signer: a key that tells its public key and signs a message asynchronously.
 * The engine, the message flow, the transaction sources and the CLI see only this, never how the key is kept
 * (a keypair in memory, an age file, an object inside an HSM).
 */
import type { Signer } from './keypair';

export interface KeySigner {
  /** Base58 public key. */
  readonly pubkey: string;
  /** The 64-byte Ed25519 signature of `message`; rejects with a SignerError when the store cannot sign now. */
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** A keypair held in this process (the `file` and `encrypted` stores) behind the async interface. */
export function inProcessSigner(signer: Signer): KeySigner {
  return { pubkey: signer.pubkey, sign: (message) => Promise.resolve(signer.sign(message)) };
}
