/**
 * `keys.NAME` with `class: biscuit_root`: the credentials' root key (docs/credentials.md) kept in a key store like
 * a signing key, so it is sealed at rest in the age keystore rather than a plaintext file. It signs credentials and
 * nothing else: the loader takes such entries out of the signing keys before anything else reads them, so no sign,
 * check, key list, token or credential can reach one, and an entry that tries to give it transaction powers (any
 * setting but class, store and pubkey) is refused rather than silently ignored.
 */
import { fail, validateEntry } from '../fail';
import { section, type Infer } from '../setting';
import { isValidKeyName } from './keys';
import { isRecord } from '../../util/is-record';

export const BISCUIT_ROOT_CLASS = 'biscuit_root';

/** The only settings a root key takes: what it is, where its secret half is, and its public key. */
export const biscuitRootKeySchema = section({
  class: {
    doc: '`biscuit_root`: the root key of serve.credentials, never usable to sign a transaction or message.',
    format: [BISCUIT_ROOT_CLASS],
    default: null,
  },
  store: {
    doc: "`encrypted` (an age file sealed with the key stores' passphrase) or `file`. Not `pkcs11`: the Biscuit library signs in this process with the private key itself, which an HSM never lets out.",
    format: ['file', 'encrypted', 'pkcs11'],
    default: 'encrypted',
  },
  pubkey: {
    doc: "The key's public key (base58, as `key new --class biscuit_root` prints it): the credentials' root public key.",
    format: 'address',
    default: null,
  },
});

export type BiscuitRootKeyConfig = Omit<Infer<typeof biscuitRootKeySchema>, 'class' | 'store'> & {
  name: string;
  store: 'file' | 'encrypted';
};

const ALLOWED = new Set(Object.keys(biscuitRootKeySchema));

/** Whether a raw `keys.NAME` entry declares a root key. */
function isRootEntry(value: unknown): boolean {
  return isRecord(value) && value.class === BISCUIT_ROOT_CLASS;
}

/**
 * Splits `keys:` into the signing keys' raw entries and the root keys, each root checked: only class, store and
 * pubkey, a store that can hand the library the key, and a pubkey no signing key has (one secret signing both a
 * transaction and credentials would give a transaction key the power to issue credentials).
 */
export function splitRootKeys(raw: Record<string, unknown>): {
  signing: Record<string, unknown>;
  roots: BiscuitRootKeyConfig[];
} {
  const signing: Record<string, unknown> = {};
  const roots: BiscuitRootKeyConfig[] = [];
  for (const name of Object.keys(raw).sort()) {
    const entry = raw[name];
    if (!isRootEntry(entry)) {
      signing[name] = entry;
      continue;
    }
    const where = `keys.${name}`;
    if (!isValidKeyName(name)) fail(`${where}: key name must be 1 to 64 lowercase letters, digits, '-' or '_'`);
    const extra = Object.keys(entry as Record<string, unknown>).filter((k) => !ALLOWED.has(k));
    if (extra.length > 0)
      fail(
        `${where}.${extra[0]}: a ${BISCUIT_ROOT_CLASS} key signs credentials only and is never usable to sign a transaction or message; it takes only class, store and pubkey (remove ${extra.join(', ')})`,
      );
    const e = validateEntry(biscuitRootKeySchema, entry, where);
    if (e.store === 'pkcs11')
      fail(
        `${where}.store: a ${BISCUIT_ROOT_CLASS} key cannot live in the HSM: the Biscuit library signs a credential in this process with the private key itself, and a pkcs11 key never leaves the HSM; use store: encrypted (an age file sealed with key_stores.encrypted's passphrase)`,
      );
    roots.push({ name, store: e.store, pubkey: e.pubkey });
  }
  return { signing, roots };
}

/** Refuses a pubkey shared by a root key and a signing key. */
export function checkRootKeysApart(
  roots: readonly BiscuitRootKeyConfig[],
  signing: readonly { name: string; pubkey: string }[],
): void {
  for (const r of roots) {
    const twin = signing.find((k) => k.pubkey === r.pubkey);
    if (twin)
      fail(
        `keys.${r.name}.pubkey: ${r.pubkey} is also keys.${twin.name}, a signing key; a ${BISCUIT_ROOT_CLASS} key must be a key of its own`,
      );
  }
}

/** The refusal for a root key named where a transaction key is expected (a token's or a credential's keys). */
export function refuseRootKeyUse(at: string, name: string, roots: readonly BiscuitRootKeyConfig[]): void {
  if (roots.some((r) => r.name === name))
    fail(
      `${at}: ${JSON.stringify(name)} is a ${BISCUIT_ROOT_CLASS} key, which signs credentials only and is never usable to sign a transaction or message`,
    );
}
