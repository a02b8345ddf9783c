/** `sa-forge-signer key new|list|show|fund|destroy`. */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load';
import type { KeyConfig, SignerConfig } from '../config/types';
import { assertKeyName, createKeyFile, destroyKeyFile, loadKeyFile } from '../keys/keyfile';
import { parseZinkAmount, transferPayload } from '../signer/transfer';
import { decodeAddress } from '../util/base58';
import { SignerError, errorMessage } from '../util/errors';
import { showUntrusted } from '../util/untrusted';
import { flag, option, requireOption, requirePositional, type ParsedArgs } from './args';
import { chainHint, config, configPath, err, keyOf, out, outJson, readLine, rpcFor, withLedger } from './context';
import { policyHash } from '../signer/policy';
import { serviceHolder } from './service-lock';
import { keyShowJson, lamportsAndSol, renderKeyList, renderKeyShow, type KeyShowView } from './render';

export async function keyCommand(sub: string, args: ParsedArgs): Promise<number> {
  if (sub === 'list') return keyList(args);
  const name = requirePositional(args, 2, 'a key name', `sa-forge-signer key ${sub} NAME`);
  if (sub === 'new') return keyNew(args, name);
  const cfg = config(args);
  const key = keyOf(cfg, name);
  if (sub === 'show') return keyShow(args, cfg, key);
  if (sub === 'fund') return keyFund(args, cfg, key);
  return keyDestroy(args, cfg, key);
}

function keyNew(args: ParsedArgs, name: string): number {
  assertKeyName(name);
  const cls = requireOption(args, 'class', 'key new NAME --class session|wallet');
  if (cls !== 'session' && cls !== 'wallet')
    throw new SignerError('request_invalid', '--class must be session or wallet');
  // The config may not exist yet: then the key goes to ./keys, as the config's default key_dir would say.
  const file = configPath(args);
  const keyDir = file !== undefined ? loadConfig({ file, env: process.env }).key_dir : path.resolve('keys');
  const pubkey = createKeyFile(keyDir, name);
  out(pubkey);
  err(`Add to ${file ?? 'your config'}:\nkeys:\n  ${name}:\n    class: ${cls}\n    pubkey: ${pubkey}`);
  return 0;
}

async function keyList(args: ParsedArgs): Promise<number> {
  const cfg = config(args);
  const halts = await withLedger(cfg, (l) => l.listHalts());
  if (flag(args, 'json')) {
    outJson(
      cfg.keys.map((k) => ({
        name: k.name,
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
  let keyFile: string;
  try {
    loadKeyFile(cfg.key_dir, key.name, key.pubkey);
    keyFile = 'ok';
  } catch (e) {
    const m = errorMessage(e);
    const held = /has pubkey (\S+),/.exec(m);
    keyFile = held ? `MISMATCH: file holds ${held[1] ?? '?'}` : `unavailable: ${m}`;
  }
  const balance = await rpcFor(cfg)
    .getBalance(key.pubkey)
    .then(
      (lamports): KeyShowView['balance'] => ({ lamports }),
      (e: unknown): KeyShowView['balance'] => ({ error: `${errorMessage(e)}; ${chainHint(cfg)}` }),
    );
  // key show is a read: a ledger it cannot open (a read-only container, a database that is down) leaves the halt
  // unknown, and the key file and balance are still worth showing.
  const halt = await withLedger(cfg, (l) => l.getHalt(key.name)).then(
    (record): KeyShowView['halt'] => ({ record }),
    (e: unknown): KeyShowView['halt'] => ({ error: errorMessage(e) }),
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
  const view: KeyShowView = { key, keyFile, balance, halt, policy: { config_hash: policyHash(cfg), service } };
  if (flag(args, 'json')) outJson(keyShowJson(view));
  else out(renderKeyShow(view));
  return 0;
}

/** On the embedded chain: an airdrop, straight away. Elsewhere: an unsigned transfer payload to sign. */
async function keyFund(args: ParsedArgs, cfg: SignerConfig, key: KeyConfig): Promise<number> {
  const usage = 'key fund NAME --zink AMOUNT [--from KEY|ADDRESS] [--out FILE]';
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
      err(`${key.name} (${key.pubkey}) ${state}. Destroying its key file loses whatever it holds, for good.`);
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
  destroyKeyFile(cfg.key_dir, key.name);
  err(
    `destroyed the key file of ${key.name}. Remove the key from its player profile if it was added, and delete keys.${key.name} from the config.`,
  );
  return 0;
}
