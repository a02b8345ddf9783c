/**
 * Picks each key's store from config. Stores are made on first use, and the PKCS#11 store's module (with its
 * native addon, pkcs11js) is loaded only then, so a signer with only file keys never loads the age or PKCS#11 code;
 * one token connection serves every pkcs11 key. Secrets named by variables are taken out of the environment at once
 * (secret-source.ts).
 */
import { keySetting } from '../config/sections/keys';
import { defaultKeyStores } from '../config/sections/key-stores';
import type { KeyConfig, KeyStoreKind, SignerConfig } from '../config/types';
import { createEncryptedStore } from './encrypted-store';
import { createFileStore } from './file-store';
import { takeSecretFromEnv } from './secret-source';
import type { KeyStore } from './store';

export interface KeyStores {
  /** The store of that kind (made once). */
  store(kind: KeyStoreKind): KeyStore;
  /** The store a configured key lives in. */
  storeOf(key: KeyConfig): KeyStore;
  /** Every store made so far. */
  made(): KeyStore[];
  close(): Promise<void>;
}

/** Settings when the config names no store other than `file`: encrypted files beside the key files, no HSM. */
export { defaultKeyStores };

export function createKeyStores(
  config: Pick<SignerConfig, 'key_dir' | 'key_stores'>,
  env: NodeJS.ProcessEnv = process.env,
): KeyStores {
  const settings = config.key_stores ?? defaultKeyStores(config.key_dir);
  // A passphrase or PIN in a variable leaves the environment now, not when the first key that needs it opens.
  takeSecretFromEnv(settings.encrypted.passphrase, env);
  takeSecretFromEnv(settings.pkcs11.pin, env);
  const stores = new Map<KeyStoreKind, KeyStore>();
  const make: Record<KeyStoreKind, () => KeyStore> = {
    file: () => createFileStore(config.key_dir),
    encrypted: () => createEncryptedStore(settings.encrypted, env),
    pkcs11: () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for a pkcs11 key (see above)
      const { createPkcs11Store } = require('./pkcs11-store') as typeof import('./pkcs11-store');
      return createPkcs11Store(settings.pkcs11, env);
    },
  };
  const store = (kind: KeyStoreKind): KeyStore => {
    let s = stores.get(kind);
    if (!s) {
      s = make[kind]();
      stores.set(kind, s);
    }
    return s;
  };
  return {
    store,
    storeOf: (key) => store(keySetting(key, 'store')),
    made: () => [...stores.values()],
    async close() {
      await Promise.all([...stores.values()].map((s) => s.close()));
      stores.clear();
    },
  };
}
