#!/usr/bin/env node
/**
 * `sa-forge-signer`: the operator CLI. stdout carries only the result (the JSON report for check and sign,
 * with the exit codes of domain.md §3.2); progress and guidance go to stderr. Errors exit 1 with `error: …`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load';
import type { KeyConfig, SignerConfig } from '../config/types';
import { createKeyFile, destroyKeyFile, loadKeyFile } from '../keys/keyfile';
import { newToken, tokenSha256 } from '../keys/tokens';
import { exportJsonl, verifyJsonlFile } from '../ledger/chain';
import { entriesUpToHead, formatHead, parseHead } from '../ledger/head';
import { openLedger } from '../ledger/open';
import { normaliseApprovalId } from '../ledger/ids';
import type { Ledger, VerifyResult } from '../ledger/types';
import { Engine, openEngine } from '../signer';
import { EXIT_CODES, EXIT_ERROR } from '../signer/report';
import { parseZinkAmount, transferPayload } from '../signer/transfer';
import type { SignProgress, SignerEngine } from '../signer/types';
import { RpcChainClient } from '../chain/rpc-client';
import { decodeAddress } from '../util/base58';
import { SignerError, errorMessage } from '../util/errors';
import { nowSeconds } from '../util/time';
import { VERSION } from '../util/version';
import { option, parseArgs, requireOption, requirePositional, type ParsedArgs } from './args';
import { runLocksCommand } from './locks';

const HELP = `sa-forge-signer ${VERSION}: the operator CLI of the sa-forge-signer transaction signer

usage: sa-forge-signer [--config FILE] COMMAND ...

  key new NAME --class session|wallet   create a key file (0600); prints the pubkey, config snippet on stderr
  key show NAME                         name, pubkey, class, approval, profile, key file state, balance
  key fund NAME --zink AMOUNT --from KEY|ADDRESS [--out FILE]
                                        build an unsigned transfer payload that funds NAME
  key destroy NAME [--abandon-balance]  overwrite and delete a key file (refused while it holds lamports)
  token new NAME --out FILE             create a bearer token in FILE (0600); prints its sha256
  check [--key KEY] FILE|-              run every check and a simulation; prints the JSON report
  sign [--key KEY] [--intent TEXT] FILE|-
                                        check, simulate, sign, send and confirm; prints the JSON report
  audit verify [--file FILE.jsonl [--head SEQ:HASH]]
                                        verify the hash chain of the ledger against its head record (or an
                                        exported file, against the head its export printed)
  audit tail [-n N]                     the last N audit entries (default 10) as JSON lines
  audit export --out FILE.jsonl         write every audit entry as JSON lines (0600); prints the head SEQ:HASH
  halt KEY|--all --reason TEXT          stop all signing with a key now, in every replica
  resume KEY                            release a halted key
  approvals list                        signs waiting for an operator
  approvals approve ID | reject ID      decide one
  locks list [--json]                   per-key locks, their holders and leases
  locks clear KEY [--force]             free a stale key lock (--force: a live one)
  localnet [--listen HOST:PORT] [--fund ADDRESS=LAMPORTS ...] [--block-ms N] [--controls]
                                        run the embedded LiteSVM chain as a JSON-RPC endpoint

The config is --config FILE, else $SIGNER_CONFIG, else ./var/local/config.yaml (written by \`npm start\`).
Exit codes for check and sign: 0 ok/confirmed, 10 refused, 11 simulation_failed, 12 failed, 14 unknown, 1 error.
`;

const out = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};
const err = (text: string): void => {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
};

function configPath(args: ParsedArgs): string | undefined {
  const given = option(args, 'config') ?? process.env.SIGNER_CONFIG;
  if (given) return given;
  const local = path.resolve('var/local/config.yaml');
  return fs.existsSync(local) ? local : undefined;
}

function config(args: ParsedArgs): SignerConfig {
  const file = configPath(args);
  if (!file)
    throw new SignerError(
      'config_invalid',
      'no config: pass --config FILE, set SIGNER_CONFIG, or run `npm start` once to create var/local/config.yaml',
    );
  return loadConfig({ file, env: process.env });
}

function keyOf(cfg: SignerConfig, name: string): KeyConfig {
  const key = cfg.keys.find((k) => k.name === name);
  if (!key) throw new SignerError('key_unknown', `no key ${JSON.stringify(name)} in the config`);
  return key;
}

async function withLedger<T>(cfg: SignerConfig, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await openLedger(cfg.ledger);
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

async function withEngine<T>(cfg: SignerConfig, fn: (engine: SignerEngine) => Promise<T>): Promise<T> {
  const engine = await openEngine(cfg);
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

// ---------------------------------------------------------------- key

async function keyCommand(args: ParsedArgs): Promise<number> {
  const sub = args.positional[1];
  const usage = 'sa-forge-signer key new|show|fund|destroy NAME';
  const name = requirePositional(args, 2, 'a key name', usage);
  if (sub === 'new') {
    const cls = requireOption(args, 'class', 'key new NAME --class session|wallet');
    if (cls !== 'session' && cls !== 'wallet')
      throw new SignerError('request_invalid', '--class must be session or wallet');
    // The config may not exist yet: then the key goes to ./keys, as the config's default key_dir would say.
    const file = configPath(args);
    const keyDir = file ? loadConfig({ file, env: process.env }).key_dir : path.resolve('keys');
    const pubkey = createKeyFile(keyDir, name);
    out(pubkey);
    err(`Add to ${file ?? 'your config'}:\nkeys:\n  ${name}:\n    class: ${cls}\n    pubkey: ${pubkey}`);
    return 0;
  }
  const cfg = config(args);
  const key = keyOf(cfg, name);
  if (sub === 'show') {
    let keyFile: string;
    try {
      loadKeyFile(cfg.key_dir, name, key.pubkey);
      keyFile = 'ok';
    } catch (e) {
      const m = errorMessage(e);
      const held = /has pubkey (\S+),/.exec(m);
      keyFile = held ? `MISMATCH: file holds ${held[1]}` : `unavailable: ${m}`;
    }
    const rpc = new RpcChainClient(cfg.cluster.rpc_url, { timeoutMs: cfg.timings.rpc_timeout_ms });
    const balance = await rpc.getBalance(key.pubkey).then(
      (b: number) => `${b} lamports`,
      (e: unknown) => `unavailable: ${errorMessage(e)}`,
    );
    const halt = await withLedger(cfg, (l) => l.getHalt(name)).catch(() => null);
    out(
      [
        `name: ${key.name}`,
        `pubkey: ${key.pubkey}`,
        `class: ${key.class}`,
        `approval: ${key.approval}`,
        `profile: ${key.profile ?? '-'}`,
        `key file: ${keyFile}`,
        `balance: ${balance}`,
        `halted: ${halt ? `yes, by ${halt.by}: ${halt.reason}` : 'no'}`,
      ].join('\n'),
    );
    return 0;
  }
  if (sub === 'fund') {
    const lamports = parseZinkAmount(requireOption(args, 'zink', 'key fund NAME --zink AMOUNT --from KEY|ADDRESS'));
    const fromArg = requireOption(args, 'from', 'key fund NAME --zink AMOUNT --from KEY|ADDRESS');
    const from = cfg.keys.find((k) => k.name === fromArg)?.pubkey ?? (decodeAddress(fromArg) ? fromArg : null);
    if (!from)
      throw new SignerError(
        'request_invalid',
        `--from ${JSON.stringify(fromArg)} is neither a configured key nor an address`,
      );
    const zink = `${lamports / 1_000_000_000n}.${(lamports % 1_000_000_000n).toString().padStart(9, '0')}`.replace(
      /\.?0+$/,
      '',
    );
    const payload = transferPayload({
      from,
      to: key.pubkey,
      lamports,
      summary: `Fund key ${name} (${key.pubkey}) with ${zink} ZINK from ${from}`,
    });
    const text = `${JSON.stringify(payload, null, 2)}\n`;
    const outFile = option(args, 'out');
    if (outFile) {
      fs.writeFileSync(outFile, text, { flag: 'wx' });
      err(`${payload.summary as string}\nwrote ${outFile}`);
    } else out(text);
    return 0;
  }
  if (sub === 'destroy') {
    if (args.options.get('abandon-balance') !== true) {
      const rpc = new RpcChainClient(cfg.cluster.rpc_url, { timeoutMs: cfg.timings.rpc_timeout_ms });
      const balance = await rpc.getBalance(key.pubkey);
      if (balance > 0) {
        throw new SignerError(
          'request_invalid',
          `${name} (${key.pubkey}) still holds ${balance} lamports; move them out first, or pass --abandon-balance`,
        );
      }
    }
    destroyKeyFile(cfg.key_dir, name);
    err(
      `destroyed the key file of ${name}. Remove the key from its player profile if it was added, and delete keys.${name} from the config.`,
    );
    return 0;
  }
  throw new SignerError('request_invalid', `unknown key command ${JSON.stringify(sub)}: ${usage}`);
}

// ---------------------------------------------------------------- token

function tokenCommand(args: ParsedArgs): number {
  const usage = 'sa-forge-signer token new NAME --out FILE';
  if (args.positional[1] !== 'new') throw new SignerError('request_invalid', usage);
  const name = requirePositional(args, 2, 'a token name', usage);
  const file = requireOption(args, 'out', usage);
  const token = newToken();
  try {
    fs.writeFileSync(file, token, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    throw new SignerError(
      'request_invalid',
      `cannot create ${file}: ${(e as NodeJS.ErrnoException).code === 'EEXIST' ? 'it already exists' : errorMessage(e)}`,
    );
  }
  const digest = tokenSha256(token);
  out(digest);
  err(
    `Add to your config (list the keys this token may use):\nserve:\n  tokens:\n    - name: ${name}\n      sha256: ${digest}\n      keys: []`,
  );
  return 0;
}

// ---------------------------------------------------------------- check / sign

function readPayloadArg(arg: string): { text: string; file: string | null } {
  if (arg === '-') return { text: fs.readFileSync(0, 'utf8'), file: null };
  let st: fs.Stats;
  try {
    st = fs.lstatSync(arg);
  } catch {
    throw new SignerError('request_invalid', `${arg} does not exist`);
  }
  if (!st.isFile()) throw new SignerError('request_invalid', `${arg} is not a regular file`);
  return { text: fs.readFileSync(arg, 'utf8'), file: arg };
}

function progressPrinter(): (p: SignProgress) => void {
  const live = process.stderr.isTTY === true;
  let lastStage = '';
  return (p) => {
    let line: string;
    switch (p.stage) {
      case 'lock':
        line = 'waiting for the key lock…';
        break;
      case 'approval':
        line = `waiting for an operator: sa-forge-signer approvals approve ${p.approval_id} (or reject), until ${new Date(p.expires_at * 1000).toISOString()}`;
        break;
      case 'sent':
        line = `sent ${p.signature}`;
        break;
      case 'confirming':
        line = `confirming ${p.signature}: ${p.status ?? 'no status yet'}, ${Math.round(p.elapsed_ms / 1000)} s`;
        break;
    }
    if (live) process.stderr.write(`\r\x1b[2K${line}`);
    else if (p.stage !== lastStage || (p.stage === 'confirming' && p.polls % 10 === 0)) err(line);
    lastStage = p.stage;
  };
}

async function checkOrSign(args: ParsedArgs, mode: 'check' | 'sign'): Promise<number> {
  const usage = `sa-forge-signer ${mode} [--key KEY]${mode === 'sign' ? ' [--intent TEXT]' : ''} FILE|-`;
  const { text, file } = readPayloadArg(requirePositional(args, 1, 'a payload file (or - for stdin)', usage));
  const cfg = config(args);
  const principal = { kind: 'operator' } as const;
  const key = option(args, 'key');
  const report = await withEngine(cfg, async (engine) => {
    if (mode === 'check') return engine.check({ payload: text, key, principal });
    const progress = progressPrinter();
    try {
      return await engine.sign({ payload: text, key, intent: option(args, 'intent'), principal, onProgress: progress });
    } finally {
      if (process.stderr.isTTY) process.stderr.write('\n');
    }
  });
  out(JSON.stringify(report, null, 2));
  // Partial signers are secrets: once sent, the payload file holding them has done its job.
  if (mode === 'sign' && file && report.signature && /"partial_signers"\s*:\s*\[\s*"/.test(text)) {
    try {
      fs.unlinkSync(file);
      err(`deleted ${file}: it held partial signers and the transaction was sent`);
    } catch (e) {
      err(`warning: could not delete ${file}, which holds partial signers: ${errorMessage(e)}`);
    }
  }
  return EXIT_CODES[report.outcome];
}

// ---------------------------------------------------------------- audit, halt, approvals

function printVerify(result: VerifyResult): number {
  if (result.ok) {
    out(`ok: ${result.entries} entries`);
    return 0;
  }
  out(result.reason.startsWith('broken:') ? result.reason : `broken: line ${result.line}: ${result.reason}`);
  return 1;
}

async function auditCommand(args: ParsedArgs): Promise<number> {
  const sub = args.positional[1];
  if (sub === 'verify') {
    const file = option(args, 'file') ?? args.positional[2];
    const headText = option(args, 'head');
    const head = headText === undefined ? undefined : parseHead(headText);
    if (head === null)
      throw new SignerError('request_invalid', '--head takes SEQ:HASH as `audit export` printed it (e.g. 42:3fa9…)');
    if (head && !file) throw new SignerError('request_invalid', '--head goes with --file FILE.jsonl');
    if (file) return printVerify(await verifyJsonlFile(file, head));
    return withLedger(config(args), async (l) => printVerify(await l.verify()));
  }
  const cfg = config(args);
  if (sub === 'tail') {
    const n = Number(option(args, 'n') ?? '10');
    if (!Number.isInteger(n) || n < 1) throw new SignerError('request_invalid', '-n takes a whole number of entries');
    return withLedger(cfg, async (l) => {
      for (const e of await l.tail(n)) out(JSON.stringify(e));
      return 0;
    });
  }
  if (sub === 'export') {
    const file = requireOption(args, 'out', 'sa-forge-signer audit export --out FILE.jsonl');
    return withLedger(cfg, async (l) => {
      const head = await l.head();
      err(`wrote ${await exportJsonl(entriesUpToHead(l.entries(), head), file)} entries to ${file}`);
      err(`keep the head apart from the file to check it later: audit verify --file FILE --head ${formatHead(head)}`);
      out(formatHead(head));
      return 0;
    });
  }
  throw new SignerError('request_invalid', 'sa-forge-signer audit verify|tail|export');
}

async function haltCommand(args: ParsedArgs): Promise<number> {
  const all = args.options.get('all') === true;
  const key = args.positional[1];
  if (!all && !key) throw new SignerError('request_invalid', 'sa-forge-signer halt KEY|--all --reason TEXT');
  const reason = requireOption(args, 'reason', 'sa-forge-signer halt KEY|--all --reason TEXT');
  const cfg = config(args);
  return withLedger(cfg, async (ledger) => {
    const engine = new Engine({
      config: cfg,
      ledger,
      chain: new RpcChainClient(cfg.cluster.rpc_url, { timeoutMs: cfg.timings.rpc_timeout_ms }),
    });
    const result = await engine.halt({ key: all ? null : key, reason, principal: { kind: 'operator' } });
    out(JSON.stringify(result, null, 2));
    return result.not_recorded.length > 0 ? EXIT_ERROR : 0;
  });
}

async function resumeCommand(args: ParsedArgs): Promise<number> {
  const name = requirePositional(args, 1, 'a key name', 'sa-forge-signer resume KEY');
  const cfg = config(args);
  keyOf(cfg, name);
  return withLedger(cfg, async (l) => {
    const lifted = await l.resume(name, 'operator', nowSeconds());
    err(lifted ? `resumed ${name}: signing is allowed again` : `${name} was not halted`);
    return 0;
  });
}

async function approvalsCommand(args: ParsedArgs): Promise<number> {
  const sub = args.positional[1];
  const cfg = config(args);
  return withLedger(cfg, async (l) => {
    if (sub === 'list' || sub === undefined) {
      const pending = await l.listApprovals({ status: 'pending' });
      if (pending.length === 0) err('no signs are waiting for approval');
      for (const a of pending) {
        out(
          `${a.id}  key ${a.key}  balance change ${a.balance_change ?? 'unknown'} lamports  fee ${a.fee ?? 'unknown'}  ` +
            `compute ${a.compute_units ?? 'unknown'}  by ${a.requested_by}  expires ${new Date(a.expires_at * 1000).toISOString()}\n` +
            `    summary (from the builder, not verified): ${a.summary}`,
        );
      }
      return 0;
    }
    if (sub === 'approve' || sub === 'reject') {
      const id = normaliseApprovalId(
        requirePositional(args, 2, 'an approval id', `sa-forge-signer approvals ${sub} ID`),
      );
      const record = await l.decideApproval(id, sub === 'approve' ? 'approved' : 'rejected', 'operator', nowSeconds());
      const wanted = sub === 'approve' ? 'approved' : 'rejected';
      if (record.status !== wanted) {
        err(`approval ${id} is ${record.status}; it can no longer be ${wanted}`);
        return EXIT_ERROR;
      }
      err(`${wanted} ${id} (key ${record.key})`);
      return 0;
    }
    throw new SignerError('request_invalid', 'sa-forge-signer approvals list|approve ID|reject ID');
  });
}

// ---------------------------------------------------------------- main

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['help', 'version', 'all', 'abandon-balance', 'controls', 'force', 'json']);
  const command = args.positional[0];
  if (args.options.get('version') === true) {
    out(VERSION);
    return 0;
  }
  if (args.options.get('help') === true || command === undefined || command === 'help') {
    out(HELP);
    return command === undefined && args.options.get('help') !== true ? EXIT_ERROR : 0;
  }
  switch (command) {
    case 'key':
      return keyCommand(args);
    case 'token':
      return tokenCommand(args);
    case 'check':
      return checkOrSign(args, 'check');
    case 'sign':
      return checkOrSign(args, 'sign');
    case 'audit':
      return auditCommand(args);
    case 'halt':
      return haltCommand(args);
    case 'resume':
      return resumeCommand(args);
    case 'approvals':
      return approvalsCommand(args);
    case 'locks': {
      const cfg = config(args);
      const req = {
        words: args.positional.slice(1),
        force: args.options.get('force') === true,
        json: args.options.get('json') === true,
        keys: cfg.keys.map((k) => k.name),
      };
      return withLedger(cfg, (l) => runLocksCommand(l, req, out));
    }
    case 'localnet': {
      // Loaded lazily: litesvm is a development dependency the production image does not have.
      const { runLocalnet } = require('../localnet/main') as typeof import('../localnet/main');
      await runLocalnet(argv.slice(argv.indexOf('localnet') + 1));
      return 0;
    }
    default:
      throw new SignerError(
        'request_invalid',
        `unknown command ${JSON.stringify(command)}; see sa-forge-signer --help`,
      );
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      err(`error: ${errorMessage(e)}`);
      process.exitCode = EXIT_ERROR;
    },
  );
}
