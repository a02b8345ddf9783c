/**
 * loadConfig: a YAML/JSON file (+ overrides) + SIGNER_* env vars → the resolved, cross-checked SignerConfig.
 * Precedence: schema defaults < file < overrides < env. Anything invalid throws SignerError('config_invalid')
 * with a message naming the key, so the service refuses to start; so does a `SIGNER_*` variable no setting reads
 * (a typo there would otherwise leave the default in force without a word). Each section resolves its own
 * settings (src/config/sections/); this file reads the document and calls them in turn.
 */
import path from 'node:path';
import { isRecord } from '../util/is-record';
import { readDocument } from './document';
import { convictErrors, convictFor, fail } from './fail';
import { registerFormats } from './formats';
import { topLevelSchema } from './schema';
import { buildBearerTokens } from './sections/bearer-tokens';
import { buildCluster } from './sections/cluster';
import { buildKeyStores } from './sections/key-stores';
import { buildKeys } from './sections/keys';
import { buildLedger } from './sections/ledger';
import { buildLocalnet } from './sections/localnet';
import { buildNotify } from './sections/notify';
import { buildOperators } from './sections/operators';
import { buildCredentials, credentialsConfigured } from './sections/credentials';
import { checkRootKeysApart, splitRootKeys } from './sections/key-biscuit-root';
import { buildPrices, checkPricedKeys } from './sections/prices';
import { buildServe } from './sections/serve';
import type { SignerConfig } from './types';
import { schemaEnvNames, unknownSignerVariables } from './unknown-env';

export { readDocument } from './document';
export { hookId } from './sections/notify';

export interface LoadConfigOptions {
  /** YAML (.yaml/.yml) or JSON (.json) file; relative paths in it resolve against its folder. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Merged over the file (objects deep, lists replaced) before env vars apply. */
  overrides?: object;
  /** `serve` needs at least one token; CLI commands do not. */
  forServe?: boolean;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isRecord(b) && isRecord(v) ? deepMerge(b, v) : v;
  }
  return out;
}

export function loadConfig(opts: LoadConfigOptions = {}): SignerConfig {
  registerFormats();
  const env = opts.env ?? process.env;
  const file = opts.file ? path.resolve(opts.file) : null;
  const baseDir = file ? path.dirname(file) : process.cwd();
  const resolve = (p: string): string => path.resolve(baseDir, p);

  let doc: unknown = file ? readDocument(file) : {};
  if (doc === null || doc === undefined) doc = {};
  if (!isRecord(doc)) fail(`config file ${file}: the top level must be a mapping`);
  const merged = opts.overrides ? deepMerge(doc, opts.overrides as Record<string, unknown>) : doc;

  const c = convictFor(topLevelSchema, env);
  try {
    c.load(merged);
    c.validate({ allowed: 'strict' });
  } catch (e) {
    fail(`config${file ? ` ${file}` : ''}: ${convictErrors('', e)}`);
  }
  const top = c.getProperties();
  const strays = unknownSignerVariables(
    env,
    schemaEnvNames(topLevelSchema),
    [
      top.ledger.url_env,
      top.key_stores.encrypted.passphrase_env,
      top.key_stores.pkcs11.pin_env,
      top.serve.credentials.root_key_env,
    ].filter((n) => n !== null),
  );
  if (strays.length > 0) fail(`environment: ${strays.join('; ')}`);

  const operators = buildOperators(top.operators);
  // Root keys leave the list first: nothing that signs a transaction or a message ever sees one.
  const { signing, roots } = splitRootKeys(top.keys);
  const keys = buildKeys(signing, operators);
  checkRootKeysApart(roots, keys);
  const prices = buildPrices(top.prices);
  checkPricedKeys(keys, prices);
  // A service needs some way in: a bearer token, or credentials its root key verifies.
  const needsTokens = opts.forServe === true && !credentialsConfigured(top.serve.credentials);
  const tokens = buildBearerTokens(top.serve, keys, resolve, needsTokens, roots);
  const credentials = buildCredentials(
    top.serve.credentials,
    keys,
    tokens.map((t) => t.name),
    resolve,
    roots,
  );
  const cluster = buildCluster(top, top.clusters, top.localnet);
  const stateDir = resolve(top.state_dir);
  const localnet = cluster.name === 'local' ? buildLocalnet(top.localnet) : null;

  return {
    source: file,
    cluster,
    key_dir: resolve(top.key_dir),
    key_stores: buildKeyStores(top, resolve, [...keys, ...roots]),
    state_dir: stateDir,
    keys,
    operators,
    ledger: buildLedger(top.ledger, resolve, env, stateDir, top.timings.ledger_failover_ms),
    timings: { ...top.timings },
    serve: buildServe(top.serve, tokens, credentials, resolve),
    localnet,
    log_level: top.log_level,
    notify: buildNotify(top.notify, top.notify_delivery, resolve),
    prices,
  };
}

/** A PostgreSQL URL fit for a log line: the password (and any query string) replaced. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    if (u.search) u.search = '?***';
    return u.toString();
  } catch {
    return '[unparseable url]';
  }
}
