/**
 * `serve.credentials`: attenuable bearer credentials (Biscuit, docs/credentials.md). The root key signs the roots the
 * signer issues (`token new NAME --biscuit`); the config lists each issued root by name, revocation id and keys,
 * never the credential itself, and the revocation ids it refuses. Off unless a root key is configured.
 */
import { fail, validateEntry } from '../fail';
import { section, type Infer } from '../setting';
import { secretRef, type SecretRef } from './key-stores';
import { refuseRootKeyUse, type BiscuitRootKeyConfig } from './key-biscuit-root';
import { isValidKeyName, type KeyConfig } from './keys';

/** Under `serve:`. */
export const credentialsSchema = section({
  root_key: {
    doc: 'Name of a `biscuit_root` key under keys (class biscuit_root, store encrypted: sealed at rest in the age keystore) holding the root private key; `key new NAME --class biscuit_root --store encrypted` makes one. Instead of root_key_file or root_key_env. Not an HSM key: the Biscuit library signs in this process with the private key itself.',
    format: 'string-or-null',
    default: null,
    nullable: true,
    env: 'SIGNER_CREDENTIALS_ROOT_KEY',
  },
  root_key_file: {
    doc: "File holding the credentials' root private key (`ed25519-private/<hex>`, 0600; `token new --biscuit` creates it when missing). null (and no root_key_env): credentials are off and only bearer tokens are accepted.",
    format: 'string-or-null',
    default: null,
    nullable: true,
    env: 'SIGNER_CREDENTIALS_ROOT_KEY_FILE',
  },
  root_key_env: {
    doc: 'Name of an environment variable holding the root private key (instead of root_key_file). The signer removes the variable from its environment once it has read it.',
    format: 'string-or-null',
    default: null,
    nullable: true,
    env: 'SIGNER_CREDENTIALS_ROOT_KEY_ENV',
  },
  issued: {
    doc: 'Root credentials this signer accepts: a list of {name, revocation_id, keys}, as `token new --biscuit` prints them. A credential whose root is not listed is refused.',
    format: 'object-list',
    default: [],
  },
  revoked: {
    doc: 'Revocation ids (hex) refused wherever they appear in a credential: revoking a block refuses it and every credential narrowed from it. Comma-separated in the env var.',
    format: 'string-list',
    default: [],
    env: 'SIGNER_CREDENTIALS_REVOKED',
  },
});

/** One entry of `serve.credentials.issued`. */
export const issuedCredentialSchema = section({
  name: {
    doc: "The root credential's name ([a-z0-9_-]{1,64}), unique among tokens and credentials; logs, metrics and the audit log show it.",
    format: 'non-empty-string',
    default: null,
  },
  revocation_id: {
    doc: "The revocation id of the credential's root block (128 hex characters), printed by `token new --biscuit`.",
    format: 'non-empty-string',
    default: null,
  },
  keys: {
    doc: 'The configured keys the credential may use; its root block names the same keys.',
    format: 'string-list',
    default: null,
  },
});

export type IssuedCredentialConfig = Infer<typeof issuedCredentialSchema>;

/**
 * Where the root private key is: a file or a variable holding its printed form, or a `biscuit_root` key in a key
 * store (whose public key the config states, so only issuing ever opens it).
 */
export type CredentialRootKey = SecretRef | { key: BiscuitRootKeyConfig };

export interface CredentialsConfig {
  root_key: CredentialRootKey;
  issued: IssuedCredentialConfig[];
  revoked: string[];
}

const REVOCATION_ID = /^[0-9a-f]{128}$/;

/** Whether a root key is configured: then the service accepts credentials (and needs no bearer token). */
export function credentialsConfigured(raw: Infer<typeof credentialsSchema>): boolean {
  return raw.root_key !== null || raw.root_key_file !== null || raw.root_key_env !== null;
}

/** The root key the config names: a `biscuit_root` key by name, or the file or variable; null when none. */
function rootKeyOf(
  raw: Infer<typeof credentialsSchema>,
  keys: readonly KeyConfig[],
  roots: readonly BiscuitRootKeyConfig[],
  resolve: (p: string) => string,
): CredentialRootKey | null {
  const where = 'serve.credentials';
  const ref = secretRef(raw.root_key_file, raw.root_key_env, `${where}.root_key`, resolve);
  if (raw.root_key === null) return ref;
  if (ref !== null) fail(`${where}.root_key: name a key store key or set root_key_file/root_key_env, not both`);
  const key = roots.find((r) => r.name === raw.root_key);
  if (key) return { key };
  const signing = keys.find((k) => k.name === raw.root_key);
  if (signing)
    fail(
      `${where}.root_key: keys.${signing.name} is a ${signing.class} key; the root must be a key of its own with class biscuit_root`,
    );
  return fail(`${where}.root_key: no biscuit_root key ${JSON.stringify(raw.root_key)} under keys`);
}

/** Credentials resolved and checked against the keys, or null when no root key is configured. */
export function buildCredentials(
  raw: Infer<typeof credentialsSchema>,
  keys: readonly KeyConfig[],
  tokenNames: readonly string[],
  resolve: (p: string) => string,
  roots: readonly BiscuitRootKeyConfig[] = [],
): CredentialsConfig | null {
  const where = 'serve.credentials';
  const rootKey = rootKeyOf(raw, keys, roots, resolve);
  if (rootKey === null) {
    if (raw.issued.length > 0)
      fail(
        `${where}.issued: credentials are listed but no root key verifies them; set ${where}.root_key (a biscuit_root key) or root_key_file`,
      );
    return null;
  }
  const names = new Set(tokenNames);
  const issued = raw.issued.map((item, i) => {
    const c = validateEntry(issuedCredentialSchema, item, `${where}.issued[${i}]`);
    const at = `${where}.issued[${i}] (${JSON.stringify(c.name)})`;
    if (!isValidKeyName(c.name))
      fail(`${where}.issued[${i}].name: a name must be 1 to 64 lowercase letters, digits, '-' or '_'`);
    if (names.has(c.name)) fail(`${at}.name: a token or another credential has that name; names must be unique`);
    names.add(c.name);
    if (!REVOCATION_ID.test(c.revocation_id))
      fail(`${at}.revocation_id: must be the 128 hex characters \`token new --biscuit\` printed`);
    for (const k of c.keys) {
      refuseRootKeyUse(`${at}.keys`, k, roots);
      const key = keys.find((x) => x.name === k);
      if (!key) fail(`${at}.keys: no key ${JSON.stringify(k)} under keys`);
      if (key.class === 'wallet' && !key.allow_unattended)
        fail(
          `${at}.keys: wallet key ${JSON.stringify(k)} may not be used by a credential unless keys.${k}.allow_unattended is true`,
        );
    }
    return { name: c.name, revocation_id: c.revocation_id, keys: [...new Set(c.keys)] };
  });
  for (const id of raw.revoked)
    if (!REVOCATION_ID.test(id))
      fail(`${where}.revoked: ${JSON.stringify(id.slice(0, 16))}… is not a revocation id (128 hex characters)`);
  return { root_key: rootKey, issued, revoked: [...new Set(raw.revoked)] };
}
