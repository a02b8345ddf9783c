/**
 * `token new NAME --biscuit`, `token narrow` and `token revoke`: credentials (docs/credentials.md). Issuing signs a
 * root credential with the root key of `serve.credentials` (a `biscuit_root` key opened in its store, or the key
 * file, created 0600 the first time) and prints what the config lists for it; narrowing adds a block of checks to
 * any credential, offline; revoking prints the config's revoked list with one more id (the config is the operator's
 * file: the CLI prints what to put in it, as issuing does). A credential is written only to a new 0600 file, never
 * to stdout or a log: stdout carries the revocation id, stderr the guidance.
 */
import fs from 'node:fs';
import { biscuitLib } from '../credentials/biscuit-lib';
import type { NarrowMode } from '../credentials/checks';
import { credentialRevocationIds, mintRoot, narrowCredential, newRootKey, rootPublicKey } from '../credentials/issue';
import { rootPrivateKeyOf, rootPublicKeyOf } from '../credentials/root-key';
import { expiryAfter } from '../credentials/ttl';
import type { ToolName } from '../credentials/vocabulary';
import { SignerError, errorMessage } from '../util/errors';
import { option, requireOption, requirePositional, type ParsedArgs } from './args';
import { usageOf } from './commands';
import { config, configPath, err, keyOf, out } from './context';

/** Usage lines from the command table (commands.ts), which parsing reads too. */
const TOKEN_NEW_BISCUIT_USAGE = usageOf('token new --biscuit');
const TOKEN_NARROW_USAGE = usageOf('token narrow');
const TOKEN_REVOKE_USAGE = usageOf('token revoke');

const list = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** Writes a credential to a new file only it can read; an existing file is never replaced. */
function writeSecretFile(file: string, text: string): void {
  try {
    fs.writeFileSync(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    const exists = e instanceof Error && 'code' in e && e.code === 'EEXIST';
    throw new SignerError(
      'request_invalid',
      `cannot create ${file}: ${exists ? 'it already exists' : errorMessage(e)}`,
    );
  }
}

/**
 * The root private key of the config: a `biscuit_root` key opened in its store, or the key file or variable; a
 * configured key file that does not exist yet is created with a new key.
 */
async function rootPrivateKey(args: ParsedArgs): Promise<{ key: string; created: string | null }> {
  const cfg = config(args);
  const creds = cfg.serve.credentials;
  if (!creds)
    throw new SignerError(
      'config_invalid',
      'credentials are off: set serve.credentials.root_key (a biscuit_root key, `key new NAME --class biscuit_root --store encrypted`) or root_key_file (a file path; `token new --biscuit` creates the key there)',
    );
  if ('file' in creds.root_key && !fs.existsSync(creds.root_key.file)) {
    const key = newRootKey(biscuitLib()).privateKey;
    writeSecretFile(creds.root_key.file, key);
    return { key, created: creds.root_key.file };
  }
  return { key: await rootPrivateKeyOf(creds.root_key, cfg), created: null };
}

/** A whole number of lamports given with `--flag`, or undefined when the flag is not given. */
function lamportsOption(args: ParsedArgs, flag: string): number | undefined {
  const value = option(args, flag);
  if (value === undefined) return undefined;
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new SignerError(
      'request_invalid',
      `--${flag} takes a whole number of lamports, not ${JSON.stringify(value)}`,
    );
  return Number(value);
}

export async function tokenNewBiscuit(args: ParsedArgs): Promise<number> {
  const name = requirePositional(args, 2, 'a credential name', TOKEN_NEW_BISCUIT_USAGE);
  const keys = list(requireOption(args, 'keys', TOKEN_NEW_BISCUIT_USAGE));
  const file = requireOption(args, 'out', TOKEN_NEW_BISCUIT_USAGE);
  const cfg = config(args);
  for (const k of keys) keyOf(cfg, k);
  const ttl = option(args, 'ttl');
  const perDay = lamportsOption(args, 'per-day-lamports');
  const { key, created } = await rootPrivateKey(args);
  const lib = biscuitLib();
  const made = mintRoot(lib, key, {
    name,
    keys,
    ...(ttl === undefined ? {} : { expiresAt: expiryAfter(ttl, new Date()) }),
    ...(perDay === undefined ? {} : { perDayLamports: perDay }),
  });
  writeSecretFile(file, made.credential);
  if (created !== null) err(`created the credentials root key in ${created} (0600); keep it like a signing key`);
  out(made.revocationId);
  err(
    [
      `Root public key (agents narrowing this credential need it): ${rootPublicKey(lib, key)}`,
      'Add to your config, then reload or restart:',
      'serve:',
      '  credentials:',
      '    issued:',
      `      - name: ${name}`,
      `        revocation_id: ${made.revocationId}`,
      `        keys: [${keys.join(', ')}]`,
    ].join('\n'),
  );
  return 0;
}

/** The root public key: given, else derived from the config's root key (on the signer's host). */
function publicKeyFor(args: ParsedArgs): string {
  const given = option(args, 'root-public-key');
  if (given !== undefined) return given;
  if (configPath(args) === undefined)
    throw new SignerError('request_invalid', `--root-public-key is required without a config: ${TOKEN_NARROW_USAGE}`);
  const cfg = config(args);
  if (!cfg.serve.credentials)
    throw new SignerError('request_invalid', `--root-public-key is required: the config has no credentials root key`);
  return rootPublicKeyOf(biscuitLib(), cfg.serve.credentials.root_key);
}

export function tokenNarrow(args: ParsedArgs): number {
  const from = requireOption(args, 'from', TOKEN_NARROW_USAGE);
  const file = requireOption(args, 'out', TOKEN_NARROW_USAGE);
  let credential: string;
  try {
    credential = fs.readFileSync(from, 'utf8').trim();
  } catch (e) {
    throw new SignerError('request_invalid', `cannot read ${from}: ${errorMessage(e)}`);
  }
  const keys = option(args, 'keys');
  const tools = option(args, 'tools');
  const mode = option(args, 'mode');
  const ttl = option(args, 'ttl');
  const perTx = lamportsOption(args, 'per-tx-lamports');
  const destinations = option(args, 'destinations');
  const perDay = lamportsOption(args, 'per-day-lamports');
  // Dollars stay the text given: the narrowing parses them (usd-amounts.ts) and refuses other forms with the reason.
  const perTxUsd = option(args, 'per-tx-usd');
  const perDayUsd = option(args, 'per-day-usd');
  const perTxTokens = option(args, 'per-tx-token');
  const made = narrowCredential(biscuitLib(), credential, publicKeyFor(args), {
    ...(keys === undefined ? {} : { keys: list(keys) }),
    ...(tools === undefined ? {} : { tools: list(tools) as ToolName[] }),
    ...(mode === undefined ? {} : { mode: mode as NarrowMode }),
    ...(ttl === undefined ? {} : { expiresAt: expiryAfter(ttl, new Date()) }),
    ...(perTx === undefined ? {} : { perTxLamports: perTx }),
    ...(destinations === undefined ? {} : { destinations: list(destinations) }),
    ...(perDay === undefined ? {} : { perDayLamports: perDay }),
    ...(perTxUsd === undefined ? {} : { perTxUsd }),
    ...(perDayUsd === undefined ? {} : { perDayUsd }),
    ...(perTxTokens === undefined ? {} : { perTxTokens: list(perTxTokens).map(mintAmount) }),
  });
  writeSecretFile(file, made.credential);
  out(made.revocationId);
  err(`narrowed credential in ${file}; its block's revocation id (on stdout) revokes it and all narrowed from it`);
  return 0;
}

const REVOCATION_ID = /^[0-9a-f]{128}$/;

/**
 * What `token revoke` was given, as the revocation id to list: an id as is; the name of an issued root, its root's
 * id (the whole tree); a credential file, its last block's id (it and all narrowed from it, its parents untouched).
 */
function revocationTarget(args: ParsedArgs, given: string): { id: string; what: string } {
  if (REVOCATION_ID.test(given)) return { id: given, what: 'that block' };
  const creds = config(args).serve.credentials;
  const root = creds?.issued.find((c) => c.name === given);
  if (root) return { id: root.revocation_id, what: `the root credential ${JSON.stringify(root.name)}` };
  if (!fs.existsSync(given))
    throw new SignerError(
      'request_invalid',
      `${JSON.stringify(given.slice(0, 64))} is neither a revocation id (128 hex), nor an issued credential's name, nor a credential file: ${TOKEN_REVOKE_USAGE}`,
    );
  let credential: string;
  try {
    credential = fs.readFileSync(given, 'utf8').trim();
  } catch (e) {
    throw new SignerError('request_invalid', `cannot read ${given}: ${errorMessage(e)}`);
  }
  const ids = credentialRevocationIds(biscuitLib(), credential, publicKeyFor(args));
  const rootName = creds?.issued.find((c) => c.revocation_id === ids[0])?.name;
  const block = ids.length - 1;
  const of = rootName === undefined ? 'a root this config does not list' : JSON.stringify(rootName);
  return {
    id: ids[block] ?? '',
    what: block === 0 ? `the root credential ${of}` : `block ${block} of a credential narrowed from ${of}`,
  };
}

export function tokenRevoke(args: ParsedArgs): number {
  const given = requirePositional(args, 2, 'a revocation id, an issued name or a credential file', TOKEN_REVOKE_USAGE);
  const creds = config(args).serve.credentials;
  if (!creds)
    throw new SignerError(
      'config_invalid',
      'credentials are off in this config (no serve.credentials root key): there is nothing to revoke',
    );
  const { id, what } = revocationTarget(args, given);
  out(id);
  if (creds.revoked.includes(id)) {
    err(`${what} is already under serve.credentials.revoked; if it is still accepted, run \`sa-forge-signer reload\``);
    return 0;
  }
  err(
    [
      `Revokes ${what} and every credential narrowed from it. Put this list in your config, then run \`sa-forge-signer reload\` (each replica applies it with its own reload):`,
      'serve:',
      '  credentials:',
      '    revoked:',
      ...[...creds.revoked, id].map((r) => `      - ${r}`),
    ].join('\n'),
  );
  return 0;
}

/** `MINT=UNITS` as `--per-tx-token` takes it; the narrowing checks the mint and the figure. */
function mintAmount(given: string): { mint: string; amount: number } {
  const m = /^([^=\s]+)=(\d{1,16})$/.exec(given);
  const [, mint, units] = m ?? [];
  if (mint === undefined || units === undefined)
    throw new SignerError(
      'request_invalid',
      `--per-tx-token: ${JSON.stringify(given.slice(0, 80))} is not MINT=UNITS (a mint address, =, whole base units)`,
    );
  return { mint, amount: Number(units) };
}
