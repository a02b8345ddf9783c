/**
 * The embedded default behind `npm start`: on a fresh clone it creates a demo key, a bearer token and a
 * config under var/local/, starts the LiteSVM chain in-process with the demo key funded, and can run a
 * real check and sign end to end. Development only: the production image has no litesvm and never loads this.
 *
 * The embedded chain lives in memory and starts from genesis on every start, so a ledger kept from an earlier run
 * would describe a chain that no longer exists (spend charged against the daily cap, signatures nobody can look
 * up). Each start therefore begins a fresh ledger and moves the previous one to state/previous-runs/; its halts
 * are carried into the fresh one (halt-carry.ts), see docs/running.md "The embedded default". A policy change needs no restart: `sa-forge-signer reload` applies it
 * to the running service, whose chain keeps every account made meanwhile (docs/decisions.md, "Reload").
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../config/load';
import type { SignerConfig } from '../config/types';
import { createKeyFile } from '../keys/keyfile';
import { newToken, tokenSha256 } from '../http/bearer-tokens';
import type { SignerEngine } from '../signer/types';
import { SignerError } from '../util/errors';
import { encodeBase58 } from '../util/base58';
import { randomBytes } from 'node:crypto';
import { transferPayload } from '../signer/transfer';
import { errorMessage } from '../util/errors';
import { listenErrorMessage } from './listen-error';
import { archiveKeepingHalts } from './halt-carry';
import { KNOWN_FEEDS } from '../pricing/feeds';
import type { LocalPrice } from '../localnet/prices';

export const DEMO_KEY = 'demo';
/**
 * The dollar price the embedded chain publishes for SOL from the start (kept fresh while it runs), so `usd` caps
 * work out of the box; `sa-forge-signer localnet price set SOL PRICE` changes it.
 */
export const LOCAL_SOL_PRICE = '150.00';
const DEMO_FUNDING = 100_000_000_000; // 100 tokens of 9 decimals: plenty for a day of experiments
const DEMO_AMOUNT = 1_000_000;

export interface LocalDefault extends LocalFiles {
  /** Where the previous run's ledger was moved, or null when there was none. */
  archivedLedger: string | null;
  close(): Promise<void>;
}

export interface LocalFiles {
  config: SignerConfig;
  configFile: string;
  tokenFile: string;
  /** True when this start created the key and token (first contact): the caller runs the demo. */
  firstRun: boolean;
}

/** Writes var/local/ on first contact (key, token, config) and loads its config; touches nothing else. */
export function loadLocalDefault(varDir: string, env: NodeJS.ProcessEnv = process.env): LocalFiles {
  fs.mkdirSync(varDir, { recursive: true, mode: 0o700 });
  const configFile = path.join(varDir, 'config.yaml');
  const tokenFile = path.join(varDir, 'token');
  let firstRun = false;
  if (!fs.existsSync(configFile)) {
    writeFirstConfig(varDir, configFile);
    firstRun = true;
  }
  if (!fs.existsSync(tokenFile)) {
    replaceToken(configFile, tokenFile);
    firstRun = true;
  }
  return { config: loadConfig({ file: configFile, env, forServe: true }), configFile, tokenFile, firstRun };
}

/** Starts the embedded chain where the config's rpc_url points; a busy address is named with the setting to change. */
export async function startLocalChain(config: SignerConfig): Promise<{ close(): Promise<void> }> {
  const url = new URL(config.cluster.rpc_url);
  // Loaded lazily: litesvm is a development dependency the production image does not have.
  const { startLocalnet } = require('../localnet/server') as typeof import('../localnet/server'); // eslint-disable-line @typescript-eslint/no-require-imports -- litesvm must stay unloaded outside --local
  try {
    return await startLocalnet({
      host: url.hostname,
      port: Number(url.port),
      fund: config.localnet?.fund ?? [],
      livePrices: [solPrice(config)],
      blockIntervalMs: config.localnet?.block_ms,
      confirmAfterBlocks: config.localnet?.confirm_after_blocks,
    });
  } catch (e) {
    throw new SignerError(
      'config_invalid',
      listenErrorMessage(e, 'chain', url.host) ??
        `cannot start the embedded chain on ${url.host} (${errorMessage(e)}); set SIGNER_RPC_URL to another loopback address`,
    );
  }
}

/** SOL at LOCAL_SOL_PRICE on the account the config's SOL feed names, else Pyth's sponsored SOL/USD account. */
function solPrice(config: SignerConfig): LocalPrice {
  const feed = config.prices?.feeds.get('SOL');
  const known = KNOWN_FEEDS['SOL/USD'];
  return {
    account: feed?.account ?? known.sponsoredAccount,
    feedId: feed?.feedId ?? known.feedId,
    price: LOCAL_SOL_PRICE,
    conf: '0',
  };
}

/**
 * The fresh chain gets a fresh ledger: the previous run's moves to state/previous-runs/, and its halts hold on in
 * the fresh one. Called only by the process that holds the state directory (cli/service-lock.ts) once every
 * listener is open, so a start that fails, or a second service on the same directory, never moves a ledger.
 */
export async function freshLedger(config: SignerConfig, log: (line: string) => void): Promise<string | null> {
  return config.ledger.store === 'sqlite' ? archiveKeepingHalts(config, config.ledger.path, log) : null;
}

/**
 * Prepares var/local/ (idempotent), starts the embedded chain and begins a fresh ledger: the three steps in one,
 * for callers that hold the state directory already (tests). The service runs them apart (cli/serve.ts).
 */
export async function prepareLocalDefault(
  varDir: string,
  env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<LocalDefault> {
  const files = loadLocalDefault(varDir, env);
  const localnet = await startLocalChain(files.config);
  try {
    const archivedLedger = await freshLedger(files.config, log);
    return { ...files, archivedLedger, close: () => localnet.close() };
  } catch (e) {
    await localnet.close();
    throw e;
  }
}

function writeFirstConfig(varDir: string, configFile: string): void {
  const keyDir = path.join(varDir, 'keys');
  const pubkey = fs.existsSync(path.join(keyDir, `${DEMO_KEY}.json`)) ? undefined : createKeyFile(keyDir, DEMO_KEY);
  if (!pubkey)
    throw new SignerError(
      'config_invalid',
      `${keyDir}/${DEMO_KEY}.json exists without ${configFile}; move var/local aside and start again`,
    );
  const destination = encodeBase58(randomBytes(32));
  const sol = KNOWN_FEEDS['SOL/USD'];
  // config/local.yaml is the template: the generated file adds the demo key, its funding and local paths.
  const template = readTemplate();
  const doc = {
    ...template,
    cluster: 'local',
    rpc_url: template.rpc_url ?? 'http://127.0.0.1:8899',
    key_dir: 'keys',
    state_dir: 'state',
    ledger: { store: 'sqlite', path: 'state/ledger.sqlite' },
    keys: {
      [DEMO_KEY]: { class: 'session', pubkey, transfer_to: [destination], daily_lamport_cap: 1_000_000_000 },
    },
    serve: { ...(template.serve ?? {}), tokens: [] as unknown[] },
    // SOL's price, which the embedded chain publishes (LOCAL_SOL_PRICE): a key's `usd` caps can use it at once.
    prices: { feeds: [{ asset: 'SOL', account: sol.sponsoredAccount, feed_id: sol.feedId }] },
    localnet: { ...(template.localnet ?? {}), fund: [{ address: pubkey, lamports: DEMO_FUNDING }] },
  };
  const header =
    '# Written by `npm start` on first run: the embedded default (LiteSVM chain, SQLite ledger, a demo key).\n' +
    '# config/example.yaml documents every key. Delete var/local/ to start from scratch.\n';
  fs.writeFileSync(configFile, header + YAML.stringify(doc), { mode: 0o600 });
}

type Template = { rpc_url?: string; serve?: Record<string, unknown>; localnet?: Record<string, unknown> } & Record<
  string,
  unknown
>;

function readTemplate(): Template {
  const file = path.resolve(__dirname, '../../../config/local.yaml');
  const alt = path.resolve(__dirname, '../../config/local.yaml');
  const found = [file, alt].find((f) => fs.existsSync(f));
  return found ? ((YAML.parse(fs.readFileSync(found, 'utf8')) as Template | null) ?? {}) : {};
}

/** A new token: the token itself goes to a 0600 file; only its sha256 goes into the config. */
function replaceToken(configFile: string, tokenFile: string): void {
  const doc = YAML.parse(fs.readFileSync(configFile, 'utf8')) as {
    serve?: { tokens?: unknown[] };
    keys?: Record<string, unknown>;
  };
  const token = newToken();
  fs.writeFileSync(tokenFile, token, { mode: 0o600, flag: 'wx' });
  doc.serve = {
    ...(doc.serve ?? {}),
    tokens: [{ name: 'local', sha256: tokenSha256(token), keys: Object.keys(doc.keys ?? {}) }],
  };
  const text = fs.readFileSync(configFile, 'utf8');
  const header = text
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .join('\n');
  fs.writeFileSync(configFile, `${header}\n${YAML.stringify(doc)}`, { mode: 0o600 });
}

/**
 * What `npm start` tells a newcomer: where the chain answers, what the demo key may do, and the commands worth
 * knowing, spelled so they work from where `npm start` runs.
 */
export function localBanner(local: LocalFiles, address: string): string[] {
  const cfg = local.config;
  const atDefault = path.resolve('var/local/config.yaml') === path.resolve(local.configFile);
  const cli = `npx sa-forge-signer${atDefault ? '' : ` --config ${local.configFile}`}`;
  const demo = cfg.keys.find((k) => k.name === DEMO_KEY);
  const lines = [
    `token: ${local.tokenFile} (0600). Add the service to Claude Code with:`,
    `  claude mcp add --transport http signer http://${address}/mcp --header "Authorization: Bearer $(cat ${local.tokenFile})"`,
    `embedded chain (Solana JSON-RPC, starts from genesis on every start): ${cfg.cluster.rpc_url}`,
  ];
  if (demo)
    lines.push(
      `demo key "${demo.name}": ${demo.pubkey}; it may send to ${demo.transfer_to.join(', ') || '(no destination)'}`,
    );
  lines.push(
    `config: ${local.configFile} (edit the keys, then reload: no restart, the chain keeps its accounts)`,
    'operator commands (another terminal, same folder):',
    `  ${cli} key show ${DEMO_KEY}                  the key, its policy, spend, balance, and the policy hash running`,
    `  ${cli} localnet mint --key ${DEMO_KEY}       a test token for the key; prints the policy lines to add`,
    `  ${cli} reload                         apply the edited config to this running service`,
    `  ${cli} audit tail                     what was signed and reloaded`,
    `  ${cli} halt ${DEMO_KEY} --reason TEXT       stop signing now (${cli} resume ${DEMO_KEY} releases)`,
  );
  const admin = (cfg.operators ?? [])[0];
  if (cfg.serve.operator && admin)
    lines.push(
      `  ${cli} operator enroll ${admin.name}          a one-time link to register a passkey for the operator console`,
    );
  return lines;
}

/** First contact: a real check and sign of a small transfer on the embedded chain, reports shown. */
export async function runDemo(
  engine: SignerEngine,
  config: SignerConfig,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<void> {
  const key = config.keys.find((k) => k.name === DEMO_KEY);
  const destination = key?.transfer_to[0];
  if (!key || !destination) return;
  const payload = transferPayload({
    from: key.pubkey,
    to: destination,
    lamports: DEMO_AMOUNT,
    summary: `Demo: send ${DEMO_AMOUNT} lamports from ${DEMO_KEY} to its allowed destination`,
  });
  const principal = { kind: 'operator' } as const;
  out(`demo: check, then sign, a transfer of ${DEMO_AMOUNT} lamports from key "${DEMO_KEY}" on the embedded chain`);
  const checked = await engine.check({ payload, principal });
  out(`demo: check → ${checked.outcome}\n${JSON.stringify(checked, null, 2)}`);
  if (checked.outcome !== 'ok') return;
  const signed = await engine.sign({ payload, principal, intent: 'first-contact demo' });
  out(`demo: sign → ${signed.outcome}\n${JSON.stringify(signed, null, 2)}`);
}
