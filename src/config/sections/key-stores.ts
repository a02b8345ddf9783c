/**
 * `key_dir` and `key_stores`: where the keys' secret halves are kept (docs/keys.md): plaintext keypair files in
 * key_dir, age-encrypted files, or an HSM over PKCS#11. A passphrase or PIN is named by a file or an environment
 * variable, never written in the config.
 */
import path from 'node:path';
import { fail } from '../fail';
import { defaultsOf, section, type Infer } from '../setting';
import type { KeyConfig } from './keys';

export const keyStoresSchema = section({
  key_dir: {
    doc: "Directory of key files (0700, files 0600). Relative paths resolve against the config file's folder.",
    format: 'non-empty-string',
    default: 'keys',
    env: 'SIGNER_KEY_DIR',
  },
  key_stores: {
    encrypted: {
      dir: {
        doc: "Directory of the encrypted keys' age files (NAME.age; 0700, files 0600); null: key_dir. Relative to the config file's folder.",
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_ENCRYPTED_KEY_DIR',
      },
      passphrase_file: {
        doc: 'File holding the passphrase of the encrypted keys (a mounted secret; one trailing newline is ignored). Never put the passphrase itself in the config.',
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_KEY_PASSPHRASE_FILE',
      },
      passphrase_env: {
        doc: 'Name of an environment variable holding the passphrase of the encrypted keys (instead of passphrase_file). The signer removes the variable from its environment once it has read it (at start), and keeps the passphrase in memory for later opens.',
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_KEY_PASSPHRASE_ENV',
      },
      scrypt_log_n: {
        doc: "scrypt work factor (log2 N) of the age files `key new`/`key import` write; 18 is the age tool's own. Opening a file reads its factor from the file.",
        format: 'nat-strict',
        default: 18,
        env: 'SIGNER_KEY_SCRYPT_LOG_N',
      },
    },
    pkcs11: {
      module: {
        doc: "The HSM vendor's PKCS#11 library (.so), e.g. /usr/lib/softhsm/libsofthsm2.so; null: no HSM.",
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_PKCS11_MODULE',
      },
      token_label: {
        doc: 'Label of the token (HSM partition) holding the pkcs11 keys; each key is found by its name as label.',
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_PKCS11_TOKEN_LABEL',
      },
      pin_file: {
        doc: "File holding the token's user PIN (a mounted secret; one trailing newline is ignored). Never put the PIN itself in the config.",
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_PKCS11_PIN_FILE',
      },
      pin_env: {
        doc: "Name of an environment variable holding the token's user PIN (instead of pin_file). The signer removes the variable from its environment once it has read it (at start), and keeps the PIN in memory for reconnects.",
        format: 'string-or-null',
        default: null,
        nullable: true,
        env: 'SIGNER_PKCS11_PIN_ENV',
      },
      sessions: {
        doc: 'Sessions kept open with the token: this many signs run in it at once.',
        format: 'nat-strict',
        default: 4,
        env: 'SIGNER_PKCS11_SESSIONS',
      },
      reconnect_ms: {
        doc: 'After the token fails (unplugged, module error, login lost), signs refuse and it is looked for again at most this often (on a sign or a /ready probe).',
        format: 'nat-strict',
        default: 1000,
        env: 'SIGNER_PKCS11_RECONNECT_MS',
      },
    },
  },
});

type Raw = Infer<typeof keyStoresSchema>['key_stores'];

/** Where a secret (a passphrase, a PIN) is read from: a file (a mounted secret) or an environment variable. */
export type SecretRef = { file: string } | { env: string };

/** `dir` resolved (key_dir when unset); `passphrase` null when no source is configured. */
export type EncryptedStoreConfig = Omit<Raw['encrypted'], 'dir' | 'passphrase_file' | 'passphrase_env'> & {
  dir: string;
  passphrase: SecretRef | null;
};

/** `module` resolved; `pin` null when no source is configured. */
export type Pkcs11StoreConfig = Omit<Raw['pkcs11'], 'pin_file' | 'pin_env'> & { pin: SecretRef | null };

export interface KeyStoresConfig {
  encrypted: EncryptedStoreConfig;
  pkcs11: Pkcs11StoreConfig;
}

/** One of `<name>_file` and `<name>_env`, or null when neither is set; both is an error. */
export function secretRef(
  file: string | null,
  envName: string | null,
  where: string,
  resolve: (p: string) => string,
): SecretRef | null {
  if (file !== null && envName !== null) fail(`${where}: set ${where}_file or ${where}_env, not both`);
  if (file !== null) return { file: resolve(file) };
  return envName === null ? null : { env: envName };
}

/** The stores' settings; a key in a store that lacks what it needs to open is refused here, naming both. */
export function buildKeyStores(
  raw: Infer<typeof keyStoresSchema>,
  resolve: (p: string) => string,
  keys: readonly Pick<KeyConfig, 'name' | 'store'>[],
): KeyStoresConfig {
  const e = raw.key_stores.encrypted;
  const p = raw.key_stores.pkcs11;
  const stores: KeyStoresConfig = {
    encrypted: {
      dir: resolve(e.dir ?? raw.key_dir),
      passphrase: secretRef(e.passphrase_file, e.passphrase_env, 'key_stores.encrypted.passphrase', resolve),
      scrypt_log_n: e.scrypt_log_n,
    },
    pkcs11: {
      module: p.module === null ? null : resolve(p.module),
      token_label: p.token_label,
      pin: secretRef(p.pin_file, p.pin_env, 'key_stores.pkcs11.pin', resolve),
      sessions: p.sessions,
      reconnect_ms: p.reconnect_ms,
    },
  };
  if (e.scrypt_log_n < 10 || e.scrypt_log_n > 22)
    fail('key_stores.encrypted.scrypt_log_n: use 10 to 22 (the age tool opens at most 22)');
  for (const key of keys) {
    if (key.store === 'encrypted' && stores.encrypted.passphrase === null)
      fail(`keys.${key.name}.store: an encrypted key needs key_stores.encrypted.passphrase_file or passphrase_env`);
    if (key.store === 'pkcs11') {
      const missing = [
        p.module === null ? 'module' : null,
        p.token_label === null ? 'token_label' : null,
        stores.pkcs11.pin === null ? 'pin_file or pin_env' : null,
      ].filter((m) => m !== null);
      if (missing.length > 0)
        fail(`keys.${key.name}.store: a pkcs11 key needs key_stores.pkcs11.${missing.join(', key_stores.pkcs11.')}`);
    }
  }
  return stores;
}

/** The stores' settings when the config names none: every default of `key_stores`, beside the key files. */
export function defaultKeyStores(keyDir: string): KeyStoresConfig {
  const raw = defaultsOf(keyStoresSchema);
  return buildKeyStores({ ...raw, key_dir: keyDir }, (p) => path.resolve(p), []);
}
