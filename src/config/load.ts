/**
 * loadConfig: a YAML/JSON file (+ overrides) + SIGNER_* env vars → the resolved, cross-checked SignerConfig.
 * Precedence: schema defaults < file < overrides < env. Anything invalid throws SignerError('config_invalid')
 * with a message naming the key, so the service refuses to start; so does a `SIGNER_*` variable no setting reads
 * (a typo there would otherwise leave the default in force without a word).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import convict from 'convict';
import YAML from 'yaml';
import { SignerError } from '../util/errors';
import { isValidKeyName } from '../keys/keyfile';
import { decodeAddress } from '../util/base58';
import { registerFormats, parseListen } from './formats';
import {
  clusterSchema,
  fundEntrySchema,
  keySchema,
  notifyHookSchema,
  operatorSchema,
  programEntrySchema,
  tokenPolicySchema,
  tokenSchema,
  topLevelSchema,
} from './schema';
import { BUILT_IN_CLUSTERS, LOCAL_DEFAULT_RPC_URL, ZINK_TESTNET, localCluster, namedEndpoints } from './clusters';
import { NOTIFY_EVENTS } from './types';
import type {
  TokenOp,
  TokenPolicy,
  ApprovalMode,
  ClusterCommitment,
  ClusterProfile,
  KeyClass,
  KeyApprovals,
  KeyConfig,
  KeyStoresConfig,
  OperatorConfig,
  SecretRef,
  LedgerConfig,
  OperatorListenerConfig,
  NotifyConfig,
  NotifyDelivery,
  NotifyEvent,
  NotifyFormat,
  ProgramEntry,
  SignerConfig,
  TokenConfig,
} from './types';
import { isRecord } from '../util/is-record';
import { parseBaseUnits } from '../util/token-amounts';
import { schemaEnvNames, unknownSignerVariables } from './unknown-env';

export interface LoadConfigOptions {
  /** YAML (.yaml/.yml) or JSON (.json) file; relative paths in it resolve against its folder. */
  file?: string;
  env?: NodeJS.ProcessEnv;
  /** Merged over the file (objects deep, lists replaced) before env vars apply. */
  overrides?: object;
  /** `serve` needs at least one token; CLI commands do not. */
  forServe?: boolean;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

function fail(message: string): never {
  throw new SignerError('config_invalid', message);
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isRecord(b) && isRecord(v) ? deepMerge(b, v) : v;
  }
  return out;
}

/** Reads a YAML or JSON document; YAML also reads JSON, so only `.json` is parsed strictly as JSON. */
export function readDocument(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    fail(`cannot read config file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    if (file.endsWith('.json')) return JSON.parse(text) as unknown;
    return YAML.parse(text, { uniqueKeys: true }) as unknown;
  } catch (e) {
    fail(`config file ${file} does not parse: ${(e as Error).message.split('\n')[0]}`);
  }
}

/** Rewrites convict's messages so each names the full key (`keys.alice.class: …`, `serve.foo: unknown key`). */
function convictErrors(prefix: string, err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const undeclared = /^configuration param '(.+)' not declared in the schema$/.exec(line);
      if (undeclared) return `${prefix}${undeclared[1]}: unknown key (not in the schema)`;
      const missing = /^configuration param '(.+)' missing from config/.exec(line);
      if (missing) return `${prefix}${missing[1]}: must be a mapping`;
      return `${prefix}${line}`;
    })
    .join('; ');
}

/** Validates one collection entry strictly against its schema; returns the entry with defaults filled in. */
function validateEntry<T>(schema: convict.Schema<T>, value: unknown, where: string): T {
  if (!isRecord(value)) fail(`${where}: must be a mapping`);
  const c = convict<T>(schema, { env: {}, args: [] });
  try {
    c.load(value);
    c.validate({ allowed: 'strict' });
  } catch (e) {
    fail(convictErrors(`${where}.`, e));
  }
  return c.getProperties();
}

type TopLevel = {
  cluster: string;
  rpc_url: string | null;
  rpc_urls: string[];
  commitment: ClusterCommitment | null;
  key_dir: string;
  key_stores: {
    encrypted: {
      dir: string | null;
      passphrase_file: string | null;
      passphrase_env: string | null;
      scrypt_log_n: number;
    };
    pkcs11: {
      module: string | null;
      token_label: string | null;
      pin_file: string | null;
      pin_env: string | null;
      sessions: number;
      reconnect_ms: number;
    };
  };
  state_dir: string;
  log_level: SignerConfig['log_level'];
  operators: unknown[];
  keys: Record<string, unknown>;
  clusters: Record<string, unknown>;
  ledger: {
    store: 'sqlite' | 'postgres';
    path: string | null;
    url: string | null;
    url_file: string | null;
    url_env: string | null;
    pool_size: number;
  };
  timings: SignerConfig['timings'];
  serve: {
    listen: string;
    allowed_hosts: string[];
    tokens: unknown[];
    tokens_file: string | null;
    max_in_flight: number;
    max_in_flight_per_token: number;
    rate_limit_per_minute: number;
    body_limit_bytes: number;
    body_timeout_ms: number;
    headers_timeout_ms: number;
    keep_alive_timeout_ms: number;
    max_connections: number;
    drain_ms: number;
    param_headers: boolean;
    metrics: string | null;
    operator: {
      listen: string | null;
      public_url: string | null;
      session_secret_file: string | null;
      session_ttl_ms: number;
      enrollment_ttl_ms: number;
    };
  };
  notify: unknown[];
  notify_delivery: NotifyDelivery;
  localnet: {
    game_programs: unknown[];
    player_profile: string | null;
    fund: unknown[];
    block_ms: number;
    confirm_after_blocks: number;
  };
};

type KeyEntry = Omit<KeyConfig, 'name' | 'approval' | 'class' | 'tokens' | 'allow_token_ops' | 'approvals'> & {
  class: KeyClass;
  approval: ApprovalMode | null;
  tokens: unknown[];
  allow_token_ops: TokenOp[];
  approvals: KeyApprovals;
};

const OPERATOR_NAME = /^[a-z0-9_-]{1,32}$/;

function buildOperators(list: unknown[]): OperatorConfig[] {
  const operators: OperatorConfig[] = [];
  for (const [i, item] of list.entries()) {
    const o = validateEntry<OperatorConfig>(operatorSchema, item, `operators[${i}]`);
    if (!OPERATOR_NAME.test(o.name))
      fail(`operators[${i}].name: ${JSON.stringify(o.name)}: use 1 to 32 lowercase letters, digits, '-' or '_'`);
    if (operators.some((x) => x.name === o.name))
      fail(`operators[${i}].name: ${JSON.stringify(o.name)} is listed twice; operator names must be unique`);
    operators.push({ name: o.name, role: o.role });
  }
  return operators;
}

/**
 * A key's quorum against the configured operators: the approvers named (every operator when it names none) and
 * how many must approve. Without operators the host's operator decides alone, so a key may not ask for more.
 */
function buildApprovals(key: string, given: KeyApprovals, operators: OperatorConfig[]): KeyApprovals | undefined {
  const where = `keys.${key}.approvals`;
  const names = operators.map((o) => o.name);
  const twice = given.approvers.find((a, i) => given.approvers.indexOf(a) !== i);
  if (twice !== undefined) fail(`${where}.approvers: ${JSON.stringify(twice)} is listed twice`);
  if (operators.length === 0) {
    if (given.approvers.length > 0)
      fail(`${where}.approvers: no operators are configured; list ${given.approvers.join(', ')} under operators`);
    if (given.required > 1)
      fail(`${where}.required: ${given.required} approvals need named operators; list them under operators`);
    return undefined;
  }
  for (const a of given.approvers) {
    if (!names.includes(a))
      fail(`${where}.approvers: ${JSON.stringify(a)} is not under operators (configured: ${names.join(', ')})`);
  }
  const approvers = given.approvers.length > 0 ? given.approvers : names;
  if (given.required > approvers.length) {
    fail(
      `${where}.required: ${given.required} approvals from ${approvers.length} approver${approvers.length === 1 ? '' : 's'} (${approvers.join(', ')}) can never be reached; use 1 to ${approvers.length}`,
    );
  }
  return { required: given.required, approvers };
}

function buildKeys(raw: Record<string, unknown>, operators: OperatorConfig[]): KeyConfig[] {
  const keys: KeyConfig[] = [];
  for (const name of Object.keys(raw).sort()) {
    if (!isValidKeyName(name)) fail(`keys.${name}: key name must be 1 to 64 lowercase letters, digits, '-' or '_'`);
    const { approvals: given, ...e } = validateEntry<KeyEntry>(keySchema, raw[name], `keys.${name}`);
    const approval: ApprovalMode = e.approval ?? (e.class === 'wallet' ? 'confirm' : 'auto');
    if (e.class === 'wallet' && approval === 'auto' && !e.allow_unattended) {
      fail(
        `keys.${name}.approval: a wallet key cannot be auto unless keys.${name}.allow_unattended is true (meant for throwaway testnet keys)`,
      );
    }
    // Halts, caps and rate limits are kept per name: two names for one pubkey would each have their own.
    const twin = keys.find((k) => k.pubkey === e.pubkey);
    if (twin) fail(`keys.${name}.pubkey: ${e.pubkey} is already keys.${twin.name}; configure each pubkey once`);
    const tokens = buildTokenPolicies(e.tokens, `keys.${name}.tokens`);
    const approvals = buildApprovals(name, given, operators);
    keys.push({
      ...e,
      name,
      approval,
      tokens,
      allow_token_ops: [...new Set(e.allow_token_ops)],
      ...(approvals ? { approvals } : {}),
    });
  }
  return keys;
}

type TokenPolicyEntry = Omit<TokenPolicy, 'per_tx' | 'per_day' | 'per_destination_per_day' | 'approve_above'> & {
  per_tx: unknown;
  per_day: unknown;
  per_destination_per_day: unknown;
  approve_above: unknown;
};

/** A key's token policies, amounts as bigint base units; a mint listed twice is an error. */
function buildTokenPolicies(list: unknown[], where: string): TokenPolicy[] {
  const units = (v: unknown): bigint | null => (v === null ? null : parseBaseUnits(v));
  const policies: TokenPolicy[] = [];
  for (const [i, item] of list.entries()) {
    const e = validateEntry<TokenPolicyEntry>(tokenPolicySchema, item, `${where}[${i}]`);
    if (policies.some((p) => p.mint === e.mint)) fail(`${where}[${i}].mint: ${e.mint} is listed twice`);
    const perDay = units(e.per_day);
    if (perDay === null) fail(`${where}[${i}].per_day: must be set`);
    policies.push({
      mint: e.mint,
      program: e.program,
      per_tx: units(e.per_tx),
      per_day: perDay,
      destinations: e.destinations === null ? null : [...new Set(e.destinations)],
      per_destination_per_day: units(e.per_destination_per_day),
      approve_above: units(e.approve_above),
    });
  }
  return policies;
}

function buildTokens(list: unknown[], where: string, keys: KeyConfig[]): TokenConfig[] {
  return list.map((item, i) => {
    const t = validateEntry<TokenConfig>(tokenSchema, item, `${where}[${i}]`);
    const at = `${where}[${i}] (${JSON.stringify(t.name)})`;
    if (!isValidKeyName(t.name))
      fail(`${where}[${i}].name: token name must be 1 to 64 lowercase letters, digits, '-' or '_'`);
    if (!SHA256_HEX.test(t.sha256))
      fail(`${at}.sha256: must be exactly 64 lowercase hex characters (the sha256 of the token, never the token)`);
    for (const k of t.keys) {
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

/**
 * The console's public origin: https anywhere, plain http only on localhost, where browsers treat it as a secure
 * context (passkeys need one) and accept it as the passkeys' host; an IP address cannot be one.
 */
export function checkPublicUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    fail(`serve.operator.public_url: ${JSON.stringify(text)} is not a URL (scheme://host[:port])`);
  }
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && u.hostname === 'localhost'))
    fail('serve.operator.public_url: use https://… (plain http works only for http://localhost:PORT)');
  if (/^[\d.]+$|^\[/.test(u.hostname))
    fail('serve.operator.public_url: name the host (passkeys are bound to a domain name, never an IP address)');
  if ((u.pathname !== '/' && u.pathname !== '') || u.search !== '' || u.hash !== '' || u.username !== '')
    fail('serve.operator.public_url: give only scheme://host[:port], without a path, query or credentials');
  return u.origin;
}

function buildOperatorListener(
  raw: TopLevel['serve']['operator'],
  resolve: (p: string) => string,
): OperatorListenerConfig | null {
  if (raw.listen === null) return null;
  const listen = parseListen(raw.listen) ?? fail('serve.operator.listen: not host:port');
  return {
    listen,
    public_url: raw.public_url === null ? null : checkPublicUrl(raw.public_url),
    session_secret_file: raw.session_secret_file === null ? null : resolve(raw.session_secret_file),
    session_ttl_ms: raw.session_ttl_ms,
    enrollment_ttl_ms: raw.enrollment_ttl_ms,
  };
}

function readTokensFile(file: string): unknown[] {
  const doc = readDocument(file);
  const list = isRecord(doc) && Array.isArray(doc.tokens) ? doc.tokens : doc;
  if (!Array.isArray(list))
    fail(`serve.tokens_file ${file}: must hold a list of tokens (or a mapping with a tokens list)`);
  return list as unknown[];
}

function buildPrograms(list: unknown[], where: string): ProgramEntry[] {
  return list.map((p, i) => validateEntry<ProgramEntry>(programEntrySchema, p, `${where}[${i}]`));
}

/** The endpoints a config names at `where` (top level: '', a cluster: 'clusters.x.'), or null for none. */
function endpointsAt(where: string, single: string | null, list: string[]): string[] | null {
  const named = namedEndpoints(where, single, list);
  if ('error' in named) fail(named.error);
  return named.urls;
}

/** The top-level endpoints and commitment, when set, override the cluster's own. */
function withRpc(
  cluster: ClusterProfile,
  top: TopLevel,
  own: { urls: string[]; commitment: ClusterCommitment },
): ClusterProfile {
  const urls = endpointsAt('', top.rpc_url, top.rpc_urls) ?? own.urls;
  return {
    ...cluster,
    rpc_url: urls[0] ?? cluster.rpc_url,
    rpc_urls: urls,
    commitment: top.commitment ?? own.commitment,
  };
}

function buildCluster(top: TopLevel): ClusterProfile {
  for (const name of Object.keys(top.clusters)) {
    if ((BUILT_IN_CLUSTERS as readonly string[]).includes(name))
      fail(`clusters.${name}: ${name} is built in and cannot be redefined`);
  }
  if (top.cluster === 'zink-testnet')
    return withRpc(
      { ...ZINK_TESTNET, programs: [...ZINK_TESTNET.programs], game_programs: [...ZINK_TESTNET.game_programs] },
      top,
      { urls: [ZINK_TESTNET.rpc_url], commitment: 'confirmed' },
    );
  if (top.cluster === 'local') {
    const local = localCluster({
      rpc_url: LOCAL_DEFAULT_RPC_URL,
      game_programs: buildPrograms(top.localnet.game_programs, 'localnet.game_programs'),
      player_profile: top.localnet.player_profile,
    });
    return withRpc(local, top, { urls: [LOCAL_DEFAULT_RPC_URL], commitment: 'confirmed' });
  }
  const raw = top.clusters[top.cluster];
  if (raw === undefined) {
    const known = [...BUILT_IN_CLUSTERS, ...Object.keys(top.clusters)].join(', ');
    fail(`cluster: unknown cluster ${JSON.stringify(top.cluster)} (known: ${known}); declare it under clusters`);
  }
  const where = `clusters.${top.cluster}`;
  const c = validateEntry<{
    genesis_hash: string;
    rpc_url: string | null;
    rpc_urls: string[];
    commitment: ClusterCommitment;
    explorer: string | null;
    programs: unknown[];
    game_programs: string[];
    player_profile: string | null;
  }>(clusterSchema, raw, where);
  if (decodeAddress(c.genesis_hash) === null) fail(`${where}.genesis_hash: must be a base58 hash`);
  const own = endpointsAt(`${where}.`, c.rpc_url, c.rpc_urls);
  const urls = endpointsAt('', top.rpc_url, top.rpc_urls) ?? own;
  if (urls === null) fail(`${where}.rpc_url: required (or set rpc_url or rpc_urls)`);
  return withRpc(
    {
      name: top.cluster,
      genesis_hash: c.genesis_hash,
      rpc_url: urls[0] ?? '',
      explorer: c.explorer,
      programs: buildPrograms(c.programs, `${where}.programs`),
      game_programs: c.game_programs,
      player_profile: c.player_profile,
    },
    top,
    { urls, commitment: c.commitment },
  );
}

/** One of `<name>_file` and `<name>_env`, or null when neither is set; both is an error. */
function secretRef(
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
function buildKeyStores(top: TopLevel, resolve: (p: string) => string, keys: KeyConfig[]): KeyStoresConfig {
  const e = top.key_stores.encrypted;
  const p = top.key_stores.pkcs11;
  const stores: KeyStoresConfig = {
    encrypted: {
      dir: resolve(e.dir ?? top.key_dir),
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

function buildLedger(
  top: TopLevel,
  resolve: (p: string) => string,
  env: NodeJS.ProcessEnv,
  stateDir: string,
): LedgerConfig {
  const l = top.ledger;
  if (l.store === 'sqlite') {
    return { store: 'sqlite', path: l.path === null ? path.join(stateDir, 'ledger.sqlite') : resolve(l.path) };
  }
  const sources = [l.url !== null, l.url_file !== null, l.url_env !== null].filter(Boolean).length;
  if (sources !== 1)
    fail('ledger: a postgres ledger needs exactly one of ledger.url, ledger.url_file or ledger.url_env');
  let url: string;
  if (l.url !== null) url = l.url;
  else if (l.url_file !== null) {
    const file = resolve(l.url_file);
    try {
      url = fs.readFileSync(file, 'utf8').trim();
    } catch (e) {
      fail(`ledger.url_file: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else {
    const name = l.url_env ?? '';
    const v = env[name];
    if (v === undefined || v.trim() === '') fail(`ledger.url_env: the environment variable ${name} is not set`);
    url = v.trim();
  }
  if (!/^postgres(ql)?:\/\//.test(url)) fail('ledger: the PostgreSQL URL must start with postgres:// or postgresql://');
  return { store: 'postgres', url, pool_size: l.pool_size };
}

/**
 * A hook's name in logs, metrics and the outbox: the URL's host and the first 8 hex of its sha256. The URL itself
 * may carry a secret (a Slack incoming webhook's path is one), so it is shown nowhere.
 */
export function hookId(url: string): string {
  const host = new URL(url).host;
  return `${host}~${createHash('sha256').update(url).digest('hex').slice(0, 8)}`;
}

/** `notify:` entries, checked: an http(s) URL, known events, a format; the secret file is read by the service. */
function buildNotify(raw: readonly unknown[], delivery: NotifyDelivery, resolve: (p: string) => string): NotifyConfig {
  const hooks = raw.map((entry, i) => {
    const where = `notify[${i}]`;
    const e = validateEntry<{ url: string; events: string[]; secret_file: string | null; format: NotifyFormat }>(
      notifyHookSchema,
      entry,
      where,
    );
    let url: URL;
    try {
      url = new URL(e.url);
    } catch {
      fail(`${where}.url: not a URL; a webhook is an http:// or https:// URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      fail(`${where}.url: a webhook is an http:// or https:// URL, not ${url.protocol}//`);
    if (url.username !== '' || url.password !== '')
      fail(`${where}.url: credentials in the URL are not allowed; the hook is authenticated by its signing secret`);
    const events = e.events.length === 0 ? [...NOTIFY_EVENTS] : e.events;
    for (const ev of events) {
      if (!(NOTIFY_EVENTS as readonly string[]).includes(ev))
        fail(`${where}.events: unknown event ${JSON.stringify(ev)}; use any of ${NOTIFY_EVENTS.join(', ')}`);
    }
    const id = hookId(url.toString());
    if (e.secret_file === null && e.format === 'standard')
      fail(`${where} (${id}).secret_file: a standard webhook needs its signing secret (a whsec_… file)`);
    return {
      id,
      url: url.toString(),
      events: [...new Set(events)] as NotifyEvent[],
      secret_file: e.secret_file === null ? null : resolve(e.secret_file),
      format: e.format,
    };
  });
  const seen = new Set<string>();
  for (const h of hooks) {
    if (seen.has(h.id)) fail(`notify: the hook ${h.id} is listed twice; list each URL once with all its events`);
    seen.add(h.id);
  }
  return { hooks, delivery: { ...delivery } };
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

  const c = convict<TopLevel>(topLevelSchema, { env, args: [] });
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
    [top.ledger.url_env, top.key_stores.encrypted.passphrase_env, top.key_stores.pkcs11.pin_env].filter(
      (n) => n !== null,
    ),
  );
  if (strays.length > 0) fail(`environment: ${strays.join('; ')}`);

  const operators = buildOperators(top.operators);
  const keys = buildKeys(top.keys, operators);
  const tokens = buildTokens(top.serve.tokens, 'serve.tokens', keys);
  if (top.serve.tokens_file !== null) {
    tokens.push(...buildTokens(readTokensFile(resolve(top.serve.tokens_file)), 'serve.tokens_file', keys));
  }
  const seen = new Set<string>();
  for (const t of tokens) {
    if (seen.has(t.name))
      fail(`serve.tokens: two tokens are named ${JSON.stringify(t.name)}; token names must be unique`);
    seen.add(t.name);
  }
  if (opts.forServe && tokens.length === 0) {
    fail(
      'serve.tokens: no tokens configured; create one with `sa-forge-signer token new NAME --out FILE` and add it under serve.tokens',
    );
  }

  const cluster = buildCluster(top);
  const stateDir = resolve(top.state_dir);
  // The `listen` format has already refused anything parseListen cannot read.
  const listen = parseListen(top.serve.listen) ?? fail(`serve.listen: not host:port`);
  const metrics =
    top.serve.metrics === null ? null : (parseListen(top.serve.metrics) ?? fail(`serve.metrics: not host:port`));

  const localnet =
    cluster.name === 'local'
      ? {
          enabled: true,
          fund: top.localnet.fund.map((f, i) =>
            validateEntry<{ address: string; lamports: number }>(fundEntrySchema, f, `localnet.fund[${i}]`),
          ),
          block_ms: top.localnet.block_ms,
          confirm_after_blocks: top.localnet.confirm_after_blocks,
        }
      : null;

  return {
    source: file,
    cluster,
    key_dir: resolve(top.key_dir),
    key_stores: buildKeyStores(top, resolve, keys),
    state_dir: stateDir,
    keys,
    operators,
    ledger: buildLedger(top, resolve, env, stateDir),
    timings: { ...top.timings },
    serve: {
      listen,
      allowed_hosts: top.serve.allowed_hosts.map((h) => h.toLowerCase()),
      tokens,
      max_in_flight: top.serve.max_in_flight,
      max_in_flight_per_token: top.serve.max_in_flight_per_token,
      rate_limit_per_minute: top.serve.rate_limit_per_minute,
      body_limit_bytes: top.serve.body_limit_bytes,
      body_timeout_ms: top.serve.body_timeout_ms,
      headers_timeout_ms: top.serve.headers_timeout_ms,
      keep_alive_timeout_ms: top.serve.keep_alive_timeout_ms,
      max_connections: top.serve.max_connections,
      drain_ms: top.serve.drain_ms,
      param_headers: top.serve.param_headers,
      metrics,
      operator: buildOperatorListener(top.serve.operator, resolve),
    },
    localnet,
    log_level: top.log_level,
    notify: buildNotify(top.notify, top.notify_delivery, resolve),
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
