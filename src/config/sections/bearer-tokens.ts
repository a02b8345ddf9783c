/**
 * `serve.tokens` and `serve.tokens_file`: the bearer tokens agents present, each by the sha256 of its secret, with
 * the keys it may use. Names are unique across both lists.
 */
import { isRecord } from '../../util/is-record';
import { readDocument } from '../document';
import { fail, validateEntry } from '../fail';
import { section, type Infer } from '../setting';
import { isValidKeyName, type KeyConfig } from './keys';
import { refuseRootKeyUse, type BiscuitRootKeyConfig } from './key-biscuit-root';

/** Under `serve:`. */
export const bearerTokensSchema = section({
  tokens: {
    doc: 'Bearer tokens: a list of {name, sha256, keys}. Only the sha256 of a token is configured (`sa-forge-signer token new`).',
    format: 'object-list',
    default: [],
  },
  tokens_file: {
    doc: 'A YAML or JSON file holding more tokens (the same list form), merged with `tokens`; for mounted secrets.',
    format: 'string-or-null',
    default: null,
    nullable: true,
    env: 'SIGNER_TOKENS_FILE',
  },
});

/** One entry of `serve.tokens` (or of `serve.tokens_file`). */
export const tokenSchema = section({
  name: {
    doc: 'Token name ([a-z0-9_-]{1,64}), unique; it is what logs, metrics and the audit log show.',
    format: 'non-empty-string',
    default: null,
  },
  sha256: {
    doc: 'sha256 of the token string, 64 lowercase hex characters.',
    format: 'non-empty-string',
    default: null,
  },
  keys: { doc: 'The configured keys this token may use.', format: 'string-list', default: null },
});

export type TokenConfig = Infer<typeof tokenSchema>;

const SHA256_HEX = /^[0-9a-f]{64}$/;

function buildTokens(
  list: readonly unknown[],
  where: string,
  keys: readonly KeyConfig[],
  roots: readonly BiscuitRootKeyConfig[],
): TokenConfig[] {
  return list.map((item, i) => {
    const t = validateEntry(tokenSchema, item, `${where}[${i}]`);
    const at = `${where}[${i}] (${JSON.stringify(t.name)})`;
    if (!isValidKeyName(t.name))
      fail(`${where}[${i}].name: token name must be 1 to 64 lowercase letters, digits, '-' or '_'`);
    if (!SHA256_HEX.test(t.sha256))
      fail(`${at}.sha256: must be exactly 64 lowercase hex characters (the sha256 of the token, never the token)`);
    for (const k of t.keys) {
      refuseRootKeyUse(`${at}.keys`, k, roots);
      const key = keys.find((c) => c.name === k);
      if (!key) fail(`${at}.keys: no key ${JSON.stringify(k)} under keys`);
      if (key.class === 'wallet' && !key.allow_unattended) {
        fail(
          `${at}.keys: wallet key ${JSON.stringify(k)} may not be used by a token unless keys.${k}.allow_unattended is true`,
        );
      }
    }
    return { name: t.name, sha256: t.sha256, keys: [...new Set(t.keys)] };
  });
}

function readTokensFile(file: string): unknown[] {
  const doc = readDocument(file);
  const list = isRecord(doc) && Array.isArray(doc.tokens) ? doc.tokens : doc;
  if (!Array.isArray(list))
    fail(`serve.tokens_file ${file}: must hold a list of tokens (or a mapping with a tokens list)`);
  return list as unknown[];
}

/** The tokens of both lists, checked against the keys; `serve` needs at least one, CLI commands none. */
export function buildBearerTokens(
  raw: Infer<typeof bearerTokensSchema>,
  keys: readonly KeyConfig[],
  resolve: (p: string) => string,
  forServe: boolean,
  roots: readonly BiscuitRootKeyConfig[] = [],
): TokenConfig[] {
  const tokens = buildTokens(raw.tokens, 'serve.tokens', keys, roots);
  if (raw.tokens_file !== null) {
    tokens.push(...buildTokens(readTokensFile(resolve(raw.tokens_file)), 'serve.tokens_file', keys, roots));
  }
  const seen = new Set<string>();
  for (const t of tokens) {
    if (seen.has(t.name))
      fail(`serve.tokens: two tokens are named ${JSON.stringify(t.name)}; token names must be unique`);
    seen.add(t.name);
  }
  if (forServe && tokens.length === 0) {
    fail(
      'serve.tokens: no tokens configured; create one with `sa-forge-signer token new NAME --out FILE` and add it under serve.tokens',
    );
  }
  return tokens;
}
