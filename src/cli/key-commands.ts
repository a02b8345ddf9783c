/** `sa-forge-signer key new|import|list|show|fund|destroy`: keys in any store (docs/keys.md). */
import { keySetting } from '../config/sections/keys';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load';
import { KEY_STORE_KINDS, type KeyConfig, type KeyStoreKind, type SignerConfig } from '../config/types';
import { assertKeyName, keypairBytesFromJson } from '../keys/keyfile';
import { createKeySet } from '../keys/key-set';
import { createKeyStores, type KeyStores } from '../keys/stores';
import { parseZinkAmount, transferPayload } from '../signer/transfer';
import { decodeAddress } from '../util/base58';
import { SignerError, errorMessage } from '../util/errors';
import { showUntrusted } from '../util/untrusted';
import { flag, option, requireOption, requirePositional, type ParsedArgs } from './args';
import { usageOf } from './commands';
import { chainHint, config, configPath, err, keyOf, out, outJson, readLine, rpcFor, withLedger } from './context';
import { policyHash } from '../signer/policy';
import { serviceHolder } from './service-lock';
import {
  keyShowJson,
  lamportsAndSol,
  renderKeyList,
  renderKeyShow,
  type KeyShowUsage,
  type KeyShowView,
} from './render';
import { nowSeconds } from '../util/time';
import { usdView } from '../signer/key-view';
import { remainingDaily, spentLamports } from '../signer/policy/rules/daily-cap';
import type { Usage } from '../ledger/types';

export async function keyCommand(sub: string, args: ParsedArgs): Promise<number> {
  if (sub === 'list') return keyList(args);
  const name = requirePositional(args, 2, 'a key name', usageOf(`key ${sub}`));
  if (sub === 'new' || sub === 'import') return keyNew(args, name, sub);
  const cfg = config(args);
  const key = keyOf(cfg, name);
  if (sub === 'show') return keyShow(args, cfg, key);
  if (sub === 'fund') return keyFund(args, cfg, key);
  return keyDestroy(args, cfg, key);
}

function storeOption(args: ParsedArgs): KeyStoreKind {
  const store = option(args, 'store') ?? 'file';
  const kind = KEY_STORE_KINDS.find((k) => k === store);
  if (kind === undefined) throw new SignerError('request_invalid', `--store must be ${KEY_STORE_KINDS.join(', ')}`);
  return kind;
}

/** Runs `fn` on the stores of the config, closing them (and so a token's sessions) afterwards. */
async function withStores<T>(cfg: Pick<SignerConfig, 'key_dir' | 'key_stores'>, fn: (s: KeyStores) => Promise<T>) {
  const stores = createKeyStores(cfg);
  try {
    return await fn(stores);
  } finally {
    await stores.close();
  }
}

/**
 * `key new` makes the key inside its store; `key import` moves a Solana keypair file into one. Either way only the
 * store's own form reaches the disk (an age file, a token object), never a plaintext copy.
 */
async function keyNew(args: ParsedArgs, name: string, sub: 'new' | 'import'): Promise<number> {
  assertKeyName(name);
  const usage = usageOf(`key ${sub}`);
  const cls = requireOption(args, 'class', usage);
  if (cls !== 'session' && cls !== 'wallet' && cls !== 'biscuit_root')
    throw new SignerError('request_invalid', '--class must be session, wallet or biscuit_root');
  const store = storeOption(args);
  if (cls === 'biscuit_root' && store === 'pkcs11')
    throw new SignerError(
      'request_invalid',
      'a biscuit_root key cannot live in the HSM: the Biscuit library signs in this process with the private key itself; use --store encrypted',
    );
  // The config may not exist yet: then a file key goes to ./keys, as the config's default key_dir would say.
  const file = configPath(args);
  const cfg = file !== undefined ? loadConfig({ file, env: process.env }) : { key_dir: path.resolve('keys') };
  if (file === undefined && store !== 'file')
    throw new SignerError('config_invalid', `--store ${store} reads key_stores from the config: pass --config FILE`);
  let from: string | undefined;
  const pubkey = await withStores(cfg, async (stores) => {
    if (sub === 'new') return stores.store(store).create(name);
    from = requireOption(args, 'from', usage);
    const keypair = readKeypairFile(from);
    try {
      return await stores.store(store).importKeypair(name, keypair);
    } finally {
      keypair.fill(0);
    }
  });
  out(pubkey);
  const root = cls === 'biscuit_root' ? `\nserve:\n  credentials:\n    root_key: ${name}` : '';
  err(
    `Add to ${file ?? 'your config'}:\nkeys:\n  ${name}:\n    class: ${cls}\n    store: ${store}\n    pubkey: ${pubkey}${root}`,
  );
  if (from !== undefined && store !== 'file')
    err(
      `${from} still holds the key in plaintext: keep an offline backup if you need one, then delete it (shred -u ${from}).`,
    );
  return 0;
}

/** A Solana keypair file (a JSON array of 64 bytes), checked; the caller wipes the bytes. */
function readKeypairFile(file: string): Uint8Array {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new SignerError('request_invalid', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const bytes = keypairBytesFromJson(text);
  if (!bytes)
    throw new SignerError(
      'request_invalid',
      `${file} is not a Solana keypair file (a JSON array of 64 bytes whose second half is the public key)`,
    );
  return bytes;
}

async function keyList(args: ParsedArgs): Promise<number> {
  const cfg = config(args);
  const halts = await withLedger(cfg, (l) => l.listHalts());
  if (flag(args, 'json')) {
    outJson(
      cfg.keys.map((k) => ({
        name: k.name,
        store: keySetting(k, 'store'),
        pubkey: k.pubkey,
        class: k.class,
        approval: k.approval,
        halted: halts.find((h) => h.key === k.name) ?? null,
      })),
    );
    return 0;
  }
  if (cfg.keys.length === 0)
    err('no keys are configured: create one with `sa-forge-signer key new NAME --class session`');
  else out(renderKeyList(cfg.keys, halts));
  return 0;
}

async function keyShow(args: ParsedArgs, cfg: SignerConfig, key: KeyConfig): Promise<number> {
  // The key opened as the service opens it (file mode, passphrase, token object and probe), beside its store's
  // health: the status key_show gives agents, with the reasons.
  const keySet = createKeySet({ ...cfg, keys: [key] });
  const status = await keySet.status(key).finally(() => keySet.close());
  const held = /(?:has|holds) pubkey (\S+)/.exec(status.key);
  const keyFile =
    status.key === 'ok' ? 'ok' : held ? `MISMATCH: the store holds ${held[1] ?? '?'}` : `unavailable: ${status.key}`;
  const balance = await rpcFor(cfg)
    .getBalance(key.pubkey)
    .then(
      (lamports): KeyShowView['balance'] => ({ lamports }),
      (e: unknown): KeyShowView['balance'] => ({ error: `${errorMessage(e)}; ${chainHint(cfg)}` }),
    );
  // key show is a read: a ledger it cannot open (a read-only container, a database that is down) leaves the halt
  // unknown, and the key file and balance are still worth showing.
  const read = await withLedger(cfg, async (l) => ({
    record: await l.getHalt(key.name),
    usage: await l.keyUsage(key.name, nowSeconds()),
  })).then(
    (r) => ({ halt: { record: r.record }, usage: usageView(key, r.usage) }),
    (e: unknown) => ({ halt: { error: errorMessage(e) }, usage: { error: errorMessage(e) } }),
  );
  // A state directory this user cannot read (another host's, a container's) only leaves the running hash unknown.
  const holder = (() => {
    try {
      return serviceHolder(cfg.state_dir);
    } catch {
      return { held: false as const };
    }
  })();
  const service = holder.held && holder.info !== null ? { pid: holder.info.pid, hash: holder.info.policy_hash } : null;
  const view: KeyShowView = {
    key,
    keyFile,
    store: keySetting(key, 'store'),
    storeHealth: status.store,
    storeState: status.state,
    balance,
    halt: read.halt,
    usage: read.usage,
    policy: { config_hash: policyHash(cfg), service },
  };
  if (flag(args, 'json')) outJson(keyShowJson(view));
  else out(renderKeyShow(view));
  return 0;
}

/** The key's usage against its caps, figured as key_show figures it for agents. */
function usageView(key: KeyConfig, usage: Usage): KeyShowUsage {
  const spent = spentLamports(usage, key.daily_lamport_cap);
  return {
    spent_lamports: spent,
    remaining_daily_lamports: remainingDaily(key, spent, 0),
    usd: usdView(key, usage),
  };
}

/** On the embedded chain: an airdrop, straight away. Elsewhere: an unsigned transfer payload to sign. */
async function keyFund(args: ParsedArgs, cfg: SignerConfig, key: KeyConfig): Promise<number> {
  const usage = usageOf('key fund');
  const lamports = parseZinkAmount(requireOption(args, 'zink', usage));
  if (cfg.cluster.name === 'local') {
    if (option(args, 'from') !== undefined || option(args, 'out') !== undefined)
      throw new SignerError(
        'request_invalid',
        'on the embedded chain key fund airdrops the amount directly: --from and --out do not apply',
      );
    if (lamports > BigInt(Number.MAX_SAFE_INTEGER))
      throw new SignerError('request_invalid', 'that amount is larger than the embedded chain can airdrop at once');
    await airdrop(cfg, key.pubkey, Number(lamports));
    const balance = await rpcFor(cfg).getBalance(key.pubkey);
    err(`funded ${key.name} (${key.pubkey}) with ${lamportsAndSol(Number(lamports))} on the embedded chain`);
    out(`balance: ${lamportsAndSol(balance)}`);
    return 0;
  }
  const fromArg = requireOption(args, 'from', usage);
  const from = cfg.keys.find((k) => k.name === fromArg)?.pubkey ?? (decodeAddress(fromArg) ? fromArg : null);
  if (from === null)
    throw new SignerError(
      'request_invalid',
      `--from ${JSON.stringify(fromArg)} is neither a configured key nor an address`,
    );
  const zink = `${lamports / 1_000_000_000n}.${(lamports % 1_000_000_000n).toString().padStart(9, '0')}`.replace(
    /\.?0+$/,
    '',
  );
  const summary = `Fund key ${key.name} (${key.pubkey}) with ${zink} ZINK from ${from}`;
  const payload = transferPayload({ from, to: key.pubkey, lamports, summary });
  const text = `${JSON.stringify(payload, null, 2)}\n`;
  const outFile = option(args, 'out');
  if (outFile !== undefined) {
    fs.writeFileSync(outFile, text, { flag: 'wx' });
    err(`${summary}\nwrote ${outFile}; sign it with: sa-forge-signer sign ${outFile}`);
  } else out(text);
  return 0;
}

async function airdrop(cfg: SignerConfig, address: string, lamports: number): Promise<void> {
  let reply: unknown;
  try {
    const res = await fetch(cfg.cluster.rpc_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'requestAirdrop', params: [address, lamports] }),
      signal: AbortSignal.timeout(cfg.timings.rpc_timeout_ms),
    });
    reply = await res.json();
  } catch (e) {
    throw new SignerError('rpc', `the airdrop failed: ${errorMessage(e)}; ${chainHint(cfg)}`);
  }
  const error = typeof reply === 'object' && reply !== null && 'error' in reply ? reply.error : undefined;
  if (error !== undefined)
    throw new SignerError(
      'rpc',
      `the embedded chain refused the airdrop: ${showUntrusted(JSON.stringify(error), 200)}`,
    );
}

/**
 * Destroying a key that may still hold lamports loses them for good, and the configured RPC may be wrong or down:
 * unless the balance is known to be zero, the operator types the key's name (or passes --force).
 */
async function keyDestroy(args: ParsedArgs, cfg: SignerConfig, key: KeyConfig): Promise<number> {
  if (!flag(args, 'force')) {
    const balance = await rpcFor(cfg)
      .getBalance(key.pubkey)
      .then(
        (b) => ({ known: true as const, lamports: b }),
        (e: unknown) => ({ known: false as const, why: errorMessage(e) }),
      );
    if (!balance.known || balance.lamports > 0) {
      const state = balance.known
        ? `still holds ${lamportsAndSol(balance.lamports)}`
        : `has a balance that cannot be read (${balance.why})`;
      err(`${key.name} (${key.pubkey}) ${state}. Destroying its key loses whatever it holds, for good.`);
      const typed = await readLine(`Type the key name (${key.name}) to destroy it anyway, or pass --force: `);
      err('');
      if (typed.trim() !== key.name) {
        throw new SignerError(
          'request_invalid',
          `not destroyed: move the funds out first, or confirm by typing ${JSON.stringify(key.name)} (or pass --force)`,
        );
      }
    }
  }
  const store = keySetting(key, 'store');
  await withStores(cfg, (stores) => stores.storeOf(key).destroy(key.name));
  const what =
    store === 'pkcs11' ? 'its objects in the PKCS#11 token' : store === 'encrypted' ? 'its age file' : 'its key file';
  err(
    `destroyed ${key.name} (${what}). Remove the key from its player profile if it was added, and delete keys.${key.name} from the config.`,
  );
  return 0;
}
