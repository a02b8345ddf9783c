/**
 * The configured keys as the engine uses them: each opened once from its store and kept (importing an Ed25519 key
 * costs about fifteen signatures, opening an encrypted one an scrypt run, an HSM key a probe signature), and a key
 * that failed to open is tried again on the next use. `verify` opens every key, so a missing file, a wrong
 * passphrase or a token without the key is found at start, not at the first sign.
 */
import { keySetting } from '../config/sections/keys';
import type { KeyConfig, KeyStoreKind, SignerConfig } from '../config/types';
import { errorMessage } from '../util/errors';
import type { KeySigner } from './key-signer';
import { keyStatus, type KeyStatus } from './key-status';
import type { KeyStore } from './store';
import { createKeyStores, type KeyStores } from './stores';

export interface KeyProblem {
  key: string;
  store: KeyStoreKind;
  message: string;
}

export interface KeySet {
  /** The key's signer; rejects with its store's SignerError (`key_file`, `key_store`) when it cannot be opened. */
  signerFor(key: KeyConfig): Promise<KeySigner>;
  /** Every key that cannot be opened, with the reason; empty when all are fine. */
  verify(): Promise<KeyProblem[]>;
  /** `verify`, plus each store in use that cannot sign now (a token gone), as a problem of each of its keys. */
  health(): Promise<KeyProblem[]>;
  /** The key opened as a sign opens it, beside its store's health: what key_show and `key show` say of it. */
  status(key: KeyConfig): Promise<KeyStatus>;
  close(): Promise<void>;
}

/** A pkcs11 store's health signs a probe in the token: asked at most once a second for `status`, however often. */
const HEALTH_FRESH_MS = 1000;

export function createKeySet(
  config: Pick<SignerConfig, 'key_dir' | 'key_stores' | 'keys'>,
  env: NodeJS.ProcessEnv = process.env,
  stores: KeyStores = createKeyStores(config, env),
): KeySet {
  const opened = new Map<string, Promise<KeySigner>>();
  const signerFor = (key: KeyConfig): Promise<KeySigner> => {
    let signer = opened.get(key.name);
    if (!signer) {
      signer = stores.storeOf(key).open(key);
      opened.set(key.name, signer);
      signer.catch(() => opened.delete(key.name));
    }
    return signer;
  };
  const verify = async (): Promise<KeyProblem[]> => {
    const results = await Promise.all(
      config.keys.map((key) =>
        signerFor(key).then(
          () => null,
          (e: unknown): KeyProblem => ({ key: key.name, store: keySetting(key, 'store'), message: errorMessage(e) }),
        ),
      ),
    );
    return results.filter((p) => p !== null);
  };
  const healths = new Map<KeyStore, { at: number; health: Promise<string> }>();
  const healthOf = (store: KeyStore): Promise<string> => {
    const known = healths.get(store);
    if (known && Date.now() - known.at < HEALTH_FRESH_MS) return known.health;
    const health = store.health().catch((e: unknown) => errorMessage(e));
    healths.set(store, { at: Date.now(), health });
    return health;
  };
  return {
    signerFor,
    verify,
    async health() {
      const problems = await verify();
      for (const store of stores.made()) {
        const status = await store.health();
        if (status === 'ok') continue;
        for (const key of config.keys)
          if (keySetting(key, 'store') === store.kind && !problems.some((p) => p.key === key.name))
            problems.push({ key: key.name, store: store.kind, message: status });
      }
      return problems.sort((a, b) => a.key.localeCompare(b.key));
    },
    async status(key) {
      const opened = await signerFor(key).then(
        () => 'ok',
        (e: unknown) => errorMessage(e),
      );
      return keyStatus(await healthOf(stores.storeOf(key)), opened);
    },
    close: () => stores.close(),
  };
}
