#!/usr/bin/env node
/**
 * `sa-forge-signer`: the operator CLI. stdout carries only the result (the JSON report for check and sign, with
 * the exit codes of docs/reports.md); progress and guidance go to stderr. Errors exit 1 with `error: …`. Every
 * command and option is listed in ./commands.ts; anything else is refused with the nearest match.
 */
import fs from 'node:fs';
import type { KeyConfig, OperatorConfig } from '../config/types';
import { isValidKeyName } from '../keys/keyfile';
import { newToken, tokenSha256 } from '../http/bearer-tokens';
import { exportJsonl, verifyJsonlFile } from '../ledger/hash-chain';
import { entriesUpToHead, formatHead, parseHead } from '../ledger/head';
import { normaliseApprovalId } from '../ledger/ids';
import { votersOf } from '../ledger/records';
import type { VerifyResult } from '../ledger/types';
import { approvalClosedMessage, votesSoFar } from '../signer/flow/approval';
import { approvalPolicyNow } from '../signer/flow/policy-now';
import { keyUsage } from '../signer/flow/preflight';
import { EXIT_CODES, EXIT_ERROR } from '../signer/report';
import type { SignProgress } from '../signer/types';
import { principalLabel } from '../signer/types';
import { SignerError, errorMessage } from '../util/errors';
import { nowSeconds } from '../util/time';
import { showUntrusted } from '../util/untrusted';
import { VERSION } from '../util/version';
import { flag, option, parseArgs, requireOption, requirePositional, type ParsedArgs } from './args';
import { ALL_OPTIONS, resolveCommand, usageOf } from './commands';
import { config, err, keyOf, out, outJson, withEngine, withLedger } from './context';
import { tokenNarrow, tokenNewBiscuit, tokenRevoke } from './credential-commands';
import { keyCommand } from './key-commands';
import { helpText } from './help';
import { localnetMint } from './localnet-mint';
import { localnetPrice } from './localnet-price';
import { localnetTransfer } from './localnet-transfer';
import { operatorCommand } from './operator-commands';
import { runLocksCommand } from './locks';
import { policyReplay, policyTest } from './policy-commands';
import { reloadCommand } from './reload-command';
import { renderApproval, renderAuditEntry } from './render';
import { notifyList } from './notify-commands';
import { treasuryPlan, treasurySubmit } from './treasury-commands';
import { createHaltBook } from '../signer/halts';
import { haltKeys } from '../signer/halt-keys';
import { heldHaltsFile } from '../signer/held-halts-file';
import { approvalDecided } from '../notify/events';
import { createOutbox } from '../notify/outbox';

// ---------------------------------------------------------------- token

function tokenCommand(args: ParsedArgs): number {
  const usage = usageOf('token new');
  const name = requirePositional(args, 2, 'a token name', usage);
  // The same rule as key names: a token name appears in logs, audit entries (token:NAME) and metrics labels.
  if (!isValidKeyName(name))
    throw new SignerError(
      'request_invalid',
      `token name ${JSON.stringify(name)}: use 1 to 64 lowercase letters, digits, '-' or '_'`,
    );
  const file = requireOption(args, 'out', usage);
  const token = newToken();
  try {
    fs.writeFileSync(file, token, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    const exists = e instanceof Error && 'code' in e && e.code === 'EEXIST';
    throw new SignerError(
      'request_invalid',
      `cannot create ${file}: ${exists ? 'it already exists' : errorMessage(e)}`,
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

/**
 * What a sign from the host's CLI says while it runs. The engine's progress counts approvals and names nobody (an
 * agent may read it); the operator at this terminal learns who may vote from `approvals list`.
 */
function progressPrinter(operatorsConfigured: boolean): (p: SignProgress) => void {
  const live = process.stderr.isTTY;
  let lastStage = '';
  return (p) => {
    let line: string;
    switch (p.stage) {
      case 'lock':
        line = 'waiting for the key lock…';
        break;
      case 'approval': {
        const who = p.required === 1 ? "an operator's approval" : `${String(p.required)} operators' approvals`;
        // With operators configured a vote names its operator; `approvals list` says who may vote.
        const as = operatorsConfigured ? ' --as NAME' : '';
        const joined = p.joined ? ' (the same payload was signed again: this waits on its pending approval)' : '';
        line = `waiting for ${who}: sa-forge-signer approvals approve ${p.approval_id}${as} (or reject), until ${new Date(p.expires_at * 1000).toISOString()}${joined}`;
        break;
      }
      case 'sent':
        line = `sent ${p.signature}`;
        break;
      case 'confirming':
        line = `confirming ${p.signature}: ${p.status ?? 'no status yet'}, ${String(Math.round(p.elapsed_ms / 1000))} s`;
        break;
    }
    if (live) process.stderr.write(`\r\x1b[2K${line}`);
    else if (p.stage !== lastStage || (p.stage === 'confirming' && p.polls % 10 === 0)) err(line);
    lastStage = p.stage;
  };
}

async function checkOrSign(args: ParsedArgs, mode: 'check' | 'sign'): Promise<number> {
  const usage = usageOf(mode);
  const { text, file } = readPayloadArg(requirePositional(args, 1, 'a payload file (or - for stdin)', usage));
  const cfg = config(args);
  const principal = { kind: 'operator' } as const;
  const key = option(args, 'key');
  const report = await withEngine(cfg, async (engine) => {
    if (mode === 'check') return engine.check({ payload: text, key, principal });
    const progress = progressPrinter((cfg.operators ?? []).length > 0);
    try {
      return await engine.sign({ payload: text, key, intent: option(args, 'intent'), principal, onProgress: progress });
    } finally {
      if (process.stderr.isTTY) process.stderr.write('\n');
    }
  });
  // The report echoes the builder's summary and warnings: escaped so a terminal shows them, never obeys them.
  outJson(report);
  // Partial signers are secrets: once sent, the payload file holding them has done its job.
  if (mode === 'sign' && file !== null && report.signature !== null && /"partial_signers"\s*:\s*\[\s*"/.test(text)) {
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

function printVerify(result: VerifyResult, json: boolean): number {
  if (json) outJson(result);
  else if (result.ok) out(`ok: ${String(result.entries)} entries`);
  else
    out(
      result.reason.startsWith('broken:')
        ? showUntrusted(result.reason)
        : `broken: line ${String(result.line)}: ${showUntrusted(result.reason)}`,
    );
  return result.ok ? 0 : 1;
}

async function auditCommand(sub: string, args: ParsedArgs): Promise<number> {
  const json = flag(args, 'json');
  if (sub === 'verify') {
    const file = option(args, 'file') ?? args.positional[2];
    const headText = option(args, 'head');
    const head = headText === undefined ? undefined : parseHead(headText);
    if (head === null)
      throw new SignerError('request_invalid', '--head takes SEQ:HASH as `audit export` printed it (e.g. 42:3fa9…)');
    if (head && file === undefined) throw new SignerError('request_invalid', '--head goes with --file FILE.jsonl');
    if (file !== undefined) return printVerify(await verifyJsonlFile(file, head), json);
    return withLedger(config(args), async (l) => printVerify(await l.verify(), json));
  }
  const cfg = config(args);
  if (sub === 'tail') {
    const n = Number(option(args, 'n') ?? '10');
    if (!Number.isInteger(n) || n < 1) throw new SignerError('request_invalid', '-n takes a whole number of entries');
    return withLedger(cfg, async (l) => {
      const entries = await l.tail(n);
      if (json) for (const e of entries) outJson(e, 0);
      else if (entries.length === 0) err('the audit log is empty');
      else out(entries.map(renderAuditEntry).join('\n'));
      return 0;
    });
  }
  const file = requireOption(args, 'out', usageOf('audit export'));
  return withLedger(cfg, async (l) => {
    const head = await l.head();
    err(`wrote ${String(await exportJsonl(entriesUpToHead(l.entries(), head), file))} entries to ${file}`);
    err(`keep the head apart from the file to check it later: audit verify --file FILE --head ${formatHead(head)}`);
    out(formatHead(head));
    return 0;
  });
}

async function haltCommand(args: ParsedArgs): Promise<number> {
  const all = flag(args, 'all');
  const key = args.positional[1];
  if (!all && key === undefined) throw new SignerError('request_invalid', usageOf('halt'));
  const reason = requireOption(args, 'reason', usageOf('halt'));
  const cfg = config(args);
  if (!all && key !== undefined) keyOf(cfg, key);
  return withLedger(cfg, async (ledger) => {
    // Through the halt book as the service halts (audited, the hooks told), with no engine: a sign of the running
    // service left without its final entry is that service's to follow, not this command's.
    const halts = createHaltBook({
      ledger,
      log: cliLog,
      file: heldHaltsFile(cfg.state_dir),
      notify: createOutbox({ ledger, hooks: cfg.notify?.hooks ?? [], log: cliLog }),
    });
    try {
      const keys = all ? cfg.keys : [keyOf(cfg, key ?? '')];
      const result = await haltKeys(halts, keys, reason, principalLabel({ kind: 'operator' }));
      outJson(result);
      return result.not_recorded.length > 0 ? EXIT_ERROR : 0;
    } finally {
      halts.close();
    }
  });
}

/** What the halt book and the outbox log from a CLI command: their errors, as warnings on stderr. */
const cliLog = { info: () => {}, warn: () => {}, error: (_o: object, msg?: string) => err(`warning: ${msg ?? ''}`) };

async function resumeCommand(args: ParsedArgs): Promise<number> {
  const name = requirePositional(args, 1, 'a key name', usageOf('resume'));
  const cfg = config(args);
  keyOf(cfg, name);
  return withLedger(cfg, async (l) => {
    // Through the halt book, as the service resumes: the resume is audited and the hooks are told of it.
    const halts = createHaltBook({
      ledger: l,
      log: cliLog,
      notify: createOutbox({ ledger: l, hooks: cfg.notify?.hooks ?? [], log: cliLog }),
    });
    const lifted = await halts.resume(name, 'operator');
    halts.close();
    err(lifted ? `resumed ${name}: signing is allowed again` : `${name} was not halted`);
    return 0;
  });
}

async function approvalsCommand(sub: string, args: ParsedArgs): Promise<number> {
  const cfg = config(args);
  return withLedger(cfg, async (l) => {
    if (sub === 'list') {
      const pending = await l.listApprovals({ status: 'pending' });
      // What the policy in the config file (the one `reload` applies) would refuse of each, for the approver.
      const read = { usage: (key: KeyConfig) => keyUsage(l, key), halt: (name: string) => l.getHalt(name) };
      const judged = await Promise.all(
        pending.map(async (a) => ({ ...a, policy_now: await approvalPolicyNow(cfg.keys, read, a) })),
      );
      if (flag(args, 'json')) outJson(judged);
      else if (judged.length === 0) err('no signs are waiting for approval');
      else out(judged.map((a) => renderApproval(a, a.policy_now)).join('\n'));
      return 0;
    }
    const decision = sub === 'approve' ? 'approved' : 'rejected';
    const id = normaliseApprovalId(requirePositional(args, 2, 'an approval id', usageOf(`approvals ${sub}`)));
    const by = voter(cfg.operators ?? [], option(args, 'as'), sub);
    const voters = votersOf(cfg.operators ?? []);
    const record = await l.decideApproval(id, decision, by, nowSeconds(), null, voters);
    const key = `key ${showUntrusted(record.key, 64)}`;
    if (record.status === 'pending' && decision === 'approved') {
      err(`voted to approve ${id} (${key}): ${votesSoFar(record)}; it needs ${record.required} approvals`);
      return 0;
    }
    if (record.status !== decision) {
      err(approvalClosedMessage(record, decision));
      return EXIT_ERROR;
    }
    // Decided here: the hooks hear of it now (the sign that waited tells them too; the outbox keeps one).
    await createOutbox({ ledger: l, hooks: cfg.notify?.hooks ?? [], log: cliLog }).emit(approvalDecided(record));
    err(`${decision} ${id} (${key})${record.required > 1 ? `: ${votesSoFar(record)}` : ''}`);
    return 0;
  });
}

/**
 * Who votes from this host: the single "operator" when the config names none (as before operators existed),
 * else the operator `--as` names. Whether that operator may vote on this approval is the ledger's decision.
 */
function voter(operators: readonly OperatorConfig[], as: string | undefined, sub: string): string {
  const names = operators.map((o) => o.name);
  if (names.length === 0) {
    if (as !== undefined)
      throw new SignerError(
        'request_invalid',
        `--as names one of the configured operators, and the config has none (operators:); run approvals ${sub} ID without it`,
      );
    return 'operator';
  }
  if (as === undefined)
    throw new SignerError(
      'request_invalid',
      `operators are configured: say which one you are with --as NAME (one of ${names.join(', ')})`,
    );
  if (!names.includes(as))
    throw new SignerError(
      'request_invalid',
      `--as ${JSON.stringify(as)}: no such operator under operators (configured: ${names.join(', ')})`,
    );
  return as;
}

// ---------------------------------------------------------------- main

export async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ALL_OPTIONS);
  const command = args.positional[0];
  if (flag(args, 'version')) {
    out(VERSION);
    return 0;
  }
  if (flag(args, 'help') || command === undefined || command === 'help') {
    out(helpText());
    return command === undefined && !flag(args, 'help') ? EXIT_ERROR : 0;
  }
  const { spec } = resolveCommand(args);
  const sub = spec.name.split(' ')[1] ?? '';
  switch (command) {
    case 'key':
      return keyCommand(sub, args);
    case 'token':
      if (sub === 'narrow') return tokenNarrow(args);
      if (sub === 'revoke') return tokenRevoke(args);
      return flag(args, 'biscuit') ? tokenNewBiscuit(args) : tokenCommand(args);
    case 'check':
    case 'sign':
      return checkOrSign(args, command);
    case 'audit':
      return auditCommand(sub, args);
    case 'halt':
      return haltCommand(args);
    case 'resume':
      return resumeCommand(args);
    case 'approvals':
      return approvalsCommand(sub, args);
    case 'operator':
      return operatorCommand(sub, args);
    case 'notify':
      return notifyList(config(args), args);
    case 'treasury':
      return sub === 'plan' ? treasuryPlan(config(args), args) : treasurySubmit(config(args), args);
    case 'locks': {
      const cfg = config(args);
      const req = {
        words: args.positional.slice(1),
        force: flag(args, 'force'),
        json: flag(args, 'json'),
        keys: cfg.keys.map((k) => k.name),
      };
      return withLedger(cfg, (l) => runLocksCommand(l, req, out));
    }
    case 'policy':
      return sub === 'test' ? policyTest(args) : policyReplay(args);
    case 'reload':
      return reloadCommand(() => config(args), flag(args, 'json'));
    case 'localnet': {
      if (args.rest[0] === 'mint') return localnetMint(config(args), args.rest.slice(1));
      if (args.rest[0] === 'price') return localnetPrice(config(args), args.rest.slice(1));
      if (args.rest[0] === 'transfer') return localnetTransfer(config(args), args.rest.slice(1));
      // Loaded lazily: litesvm is a development dependency the production image does not have.
      const { runLocalnet } = require('../localnet/main') as typeof import('../localnet/main'); // eslint-disable-line @typescript-eslint/no-require-imports -- litesvm must stay unloaded unless asked for
      await runLocalnet(args.rest);
      return 0;
    }
    default:
      throw new SignerError('internal', `command ${JSON.stringify(command)} has no handler`);
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
