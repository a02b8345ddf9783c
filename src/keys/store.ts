/**
 * A key store keeps keys' secret halves and hands out signers (docs/keys.md). Every store checks a key fully when
 * it opens it (the file's mode, the passphrase, the token object and a probe signature, and always that it holds
 * the configured pubkey), so a key that cannot sign is found at start, not at the first payment.
 */
import type { KeyConfig, KeyStoreKind } from '../config/types';
import type { KeySigner } from './key-signer';

export interface KeyStore {
  readonly kind: KeyStoreKind;
  /** The configured key, checked and ready to sign; rejects with a SignerError naming the key and why. */
  open(key: KeyConfig): Promise<KeySigner>;
  /** A new key created inside the store (never overwriting one); resolves to its pubkey. */
  create(name: string): Promise<string>;
  /** A Solana keypair (64 bytes) moved into the store; resolves to its pubkey. The caller wipes the bytes. */
  importKeypair(name: string, keypair: Uint8Array): Promise<string>;
  /** Removes the key from the store for good. */
  destroy(name: string): Promise<void>;
  /** `ok`, or why the store cannot sign now (a token that went away); a key's own problem is `open`'s. */
  health(): Promise<string>;
  close(): Promise<void>;
}
