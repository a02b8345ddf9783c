/**
 * The keys' secret halves, loaded from their files once and kept: importing an Ed25519 key costs about fifteen
 * signatures, and a changed key file needs a restart like a changed config. `verify` loads every key so a missing
 * file, a loose mode or a pubkey that does not match the config is found at start, not at the first sign.
 */
import type { KeyConfig } from '../config/types';
import type { Signer } from '../keys/keypair';
import { loadKeyFile } from '../keys/keyfile';
import { errorMessage } from '../util/errors';

export interface KeyProblem {
  key: string;
  message: string;
}

export interface KeyFiles {
  /** The key's signer; throws the key file's SignerError (code `key_file`) when it cannot be loaded. */
  signerFor(key: KeyConfig): Signer;
  /** Every key whose file cannot be used, with the reason; empty when all are fine. */
  verify(): KeyProblem[];
}

export function createKeyFiles(keyDir: string, keys: readonly KeyConfig[]): KeyFiles {
  const loaded = new Map<string, Signer>();
  const signerFor = (key: KeyConfig): Signer => {
    let signer = loaded.get(key.name);
    if (!signer) {
      signer = loadKeyFile(keyDir, key.name, key.pubkey);
      loaded.set(key.name, signer);
    }
    return signer;
  };
  return {
    signerFor,
    verify() {
      const problems: KeyProblem[] = [];
      for (const key of keys) {
        try {
          signerFor(key);
        } catch (e) {
          problems.push({ key: key.name, message: errorMessage(e) });
        }
      }
      return problems;
    },
  };
}
