/**
 * What the operator CLI prints for people. Every string an agent could have written (a summary, a halt reason,
 * who asked) goes through showUntrusted, so it can neither move the cursor nor start a line of its own; the
 * amounts an operator decides on are the signer's own figures, never the agent's words.
 */
import { keySetting } from '../config/sections/keys';
import type { KeyConfig, KeyStoreKind } from '../config/types';
import type { StoreState } from '../keys/key-status';
import type { ApprovalRecord, AuditEntry, HaltRecord, TokenFigure } from '../ledger/types';
import { votesSoFar } from '../signer/flow/approval';
import type { KeyPolicyView } from '../signer/types';
import type { Refusal } from '../signer/refusals';
import { showAmount } from '../util/token-amounts';
import { MAX_MESSAGE_BYTES } from '../signer/wire/sizes';
import { showUntrusted } from '../util/untrusted';

const LAMPORTS_PER_SOL = 1_000_000_000n;

/** `-1005000 lamports (-0.001005 SOL)`, or `unknown` when the signer has no figure. */
export function lamportsAndSol(lamports: number | null): string {
  if (lamports === null) return 'unknown';
  const n = BigInt(lamports);
  const abs = n < 0n ? -n : n;
  const fraction = (abs % LAMPORTS_PER_SOL).toString().padStart(9, '0').replace(/0+$/, '');
  const sol = `${n < 0n ? '-' : ''}${abs / LAMPORTS_PER_SOL}${fraction === '' ? '' : `.${fraction}`}`;
  return `${lamports} lamports (${sol} SOL)`;
}

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/**
 * One pending approval: a header line, then indented lines; the summary last and marked as unverified. A message
 * sign shows the whole message instead of amounts (it moves none), escaped like every other text from an agent.
 */
export function renderApproval(a: ApprovalRecord, policyNow: Refusal | null = null): string {
  if (a.message !== undefined && a.message !== null) {
    return [
      `${a.id}  key ${showUntrusted(a.key, 64)}  expires ${iso(a.expires_at)}`,
      ...policyNowLines(policyNow),
      ...quorumLines(a),
      `    signs a message, not a transaction: nothing is sent, but the signature can log in or authorise as this key`,
      ...(a.message_description ? [`    what it is: ${showUntrusted(a.message_description, 600)}`] : []),
      `    message (exactly the text signed, escaped): ${showUntrusted(a.message, MAX_MESSAGE_BYTES)}`,
      `    requested by: ${showUntrusted(a.requested_by, 80)}`,
      `    summary (from the builder, not verified): ${showUntrusted(a.summary)}`,
    ].join('\n');
  }
  return [
    `${a.id}  key ${showUntrusted(a.key, 64)}  expires ${iso(a.expires_at)}`,
    ...policyNowLines(policyNow),
    ...quorumLines(a),
    `    balance change: ${lamportsAndSol(a.balance_change)}  (computed by the signer's simulation)`,
    ...(a.usd_value ? [`    dollar value: $${a.usd_value}  (what leaves the key, at price + confidence)`] : []),
    `    fee: ${lamportsAndSol(a.fee)}${a.fee_payer ? `, paid by ${a.fee_payer}` : ''}`,
    ...(a.destinations ?? []).map((d) => `    SOL to ${d.address}: +${lamportsAndSol(d.lamports)}`),
    ...(a.tokens ?? []).flatMap(tokenLines),
    ...(a.programs && a.programs.length > 0 ? [`    programs: ${a.programs.join(', ')}`] : []),
    `    compute units: ${a.compute_units ?? 'unknown'}`,
    `    requested by: ${showUntrusted(a.requested_by, 80)}`,
    `    summary (from the builder, not verified): ${showUntrusted(a.summary)}`,
  ].join('\n');
}

/**
 * A warning above the figures when the policy in force now would refuse them: approving it sends nothing, since
 * the sign is judged again by that policy after the decision.
 */
function policyNowLines(refused: Refusal | null): string[] {
  if (refused === null) return [];
  return [
    `    WARNING: the policy in force now refuses this (${refused.reason}): ${showUntrusted(refused.message, 600)}; approving it sends nothing`,
  ];
}

/**
 * The votes so far against the quorum (`approvals: 1 of 2: alice`) and who may still vote; nothing for a request
 * the host's operator decides alone (no operators configured).
 */
function quorumLines(a: ApprovalRecord): string[] {
  if (a.approvers === null && a.required === 1 && a.votes.length === 0) return [];
  const rejected = a.votes.filter((v) => v.decision === 'rejected').map((v) => v.operator);
  const line = `${votesSoFar(a)}${rejected.length > 0 ? `; rejected by ${rejected.join(', ')}` : ''}  (approvers: ${a.approvers === null ? 'any operator' : a.approvers.join(', ')})`;
  // Names come from the config or the console, not from agents; escaped anyway, as everything the ledger returns.
  return [`    approvals: ${showUntrusted(line, 2000)}`];
}

/** A mint's movement in an approval: the key's change and each receiving owner, in base and UI units. */
function tokenLines(f: TokenFigure): string[] {
  const show = (amount: string) => showAmount(BigInt(amount), f.decimals);
  return [
    `    token ${f.mint}: ${show(f.change)}  (computed by the signer's simulation)`,
    ...f.credits.map((c) => `      to ${c.owner}: ${show(c.amount)}`),
  ];
}

export function renderHalt(halt: HaltRecord | null): string {
  return halt ? `yes, by ${showUntrusted(halt.by, 80)} at ${iso(halt.ts)}: ${showUntrusted(halt.reason)}` : 'no';
}

export interface KeyShowView {
  key: KeyConfig;
  /** `ok`, or why the key's store cannot open it. */
  keyFile: string;
  store: KeyStoreKind;
  /** `ok`, or what is wrong with the store for this key: it cannot sign now (a token gone), or cannot open the key. */
  storeHealth: string;
  storeState: StoreState;
  balance: { lamports: number } | { error: string };
  /** The key's halt, or why the ledger could not say (a read-only filesystem, a database that is down). */
  halt: { record: HaltRecord | null } | { error: string };
  /**
   * What the key spent or reserved in 24 h and what is left of its caps (lamports, and dollars for a key with `usd`
   * caps, as key_show computes them), or why the ledger could not say.
   */
  usage: KeyShowUsage | { error: string };
  /** The policy hash of the config read here, and the one the service on this state directory runs (if any). */
  policy: { config_hash: string; service: { pid: number; hash: string | null } | null };
}

/** A key's usage of the last 24 h against its caps, from the ledger. */
export interface KeyShowUsage {
  spent_lamports: number;
  remaining_daily_lamports: number;
  /** key_show's dollar view (signer/key-view.ts): caps, recorded value of the last 24 h, what is left; null: none. */
  usd: KeyPolicyView['usd'];
}

/** `$5.00`, or `none` for a cap that is not set. */
const dollars = (d: string | null): string => (d === null ? 'none' : `$${d}`);

/** The lamport cap's line and, for a key with dollar caps, the dollars' line: the cap, what was used, what is left. */
function usageLines(v: KeyShowView): string[] {
  const cap = `daily cap: ${lamportsAndSol(v.key.daily_lamport_cap)}`;
  if ('error' in v.usage)
    return [`${cap}; used today: unknown: the ledger could not be read (${showUntrusted(v.usage.error, 200)})`];
  const u = v.usage;
  const lines = [
    `${cap}; spent or reserved in 24 h: ${lamportsAndSol(u.spent_lamports)}; left: ${lamportsAndSol(u.remaining_daily_lamports)}`,
  ];
  if (u.usd === null) lines.push('usd caps: none');
  else
    lines.push(
      `usd caps: per_tx ${dollars(u.usd.per_tx)}, per_day ${dollars(u.usd.per_day)}, approve_above ${dollars(u.usd.approve_above)}; ` +
        `signed or reserved in 24 h: $${u.usd.spent_or_reserved_24h} (as recorded at each sign); left today: ${dollars(u.usd.remaining_daily)}`,
    );
  return lines;
}

function renderPolicy(p: KeyShowView['policy']): string {
  const running =
    p.service === null
      ? 'no service runs on this state directory'
      : p.service.hash === null
        ? `the service (pid ${String(p.service.pid)}) is still starting`
        : p.service.hash === p.config_hash
          ? `the service (pid ${String(p.service.pid)}) runs it`
          : `the service (pid ${String(p.service.pid)}) runs ${p.service.hash}: sa-forge-signer reload applies this config`;
  return `policy hash: ${p.config_hash} (this config); ${running}`;
}

export function renderKeyShow(v: KeyShowView): string {
  return [
    `name: ${v.key.name}`,
    `pubkey: ${v.key.pubkey}`,
    `class: ${v.key.class}`,
    `approval: ${v.key.approval}`,
    `profile: ${v.key.profile ?? '-'}`,
    `store: ${v.store} (${v.storeHealth})`,
    `key: ${v.keyFile}`,
    `balance: ${'lamports' in v.balance ? lamportsAndSol(v.balance.lamports) : `unavailable: ${v.balance.error}`}`,
    `halted: ${'record' in v.halt ? renderHalt(v.halt.record) : `unknown: the ledger could not be read (${showUntrusted(v.halt.error, 200)})`}`,
    `signs messages: ${v.key.sign_messages === true ? 'yes (sign_messages: off-chain messages and sign-in texts)' : 'no'}`,
    ...usageLines(v),
    `tokens: ${(v.key.tokens ?? []).map((t) => `${t.mint} (per_tx ${t.per_tx?.toString() ?? '-'}, per_day ${t.per_day.toString()})`).join(', ') || 'none'}`,
    renderPolicy(v.policy),
  ].join('\n');
}

/** The `--json` form of key show: the same facts, with numbers as numbers. */
export function keyShowJson(v: KeyShowView): Record<string, unknown> {
  return {
    name: v.key.name,
    pubkey: v.key.pubkey,
    class: v.key.class,
    approval: v.key.approval,
    profile: v.key.profile,
    store: v.store,
    store_health: v.storeHealth,
    store_status: v.storeState,
    key_file: v.keyFile,
    balance_lamports: 'lamports' in v.balance ? v.balance.lamports : null,
    balance_error: 'error' in v.balance ? v.balance.error : null,
    halted: 'record' in v.halt ? v.halt.record : null,
    halt_error: 'error' in v.halt ? v.halt.error : null,
    sign_messages: v.key.sign_messages === true,
    daily_lamport_cap: v.key.daily_lamport_cap,
    spent_or_reserved_24h: 'error' in v.usage ? null : v.usage.spent_lamports,
    remaining_daily_lamports: 'error' in v.usage ? null : v.usage.remaining_daily_lamports,
    usd: 'error' in v.usage ? null : v.usage.usd,
    usage_error: 'error' in v.usage ? v.usage.error : null,
    policy_hash: v.policy.config_hash,
    service: v.policy.service === null ? null : { pid: v.policy.service.pid, policy_hash: v.policy.service.hash },
  };
}

export function renderKeyList(keys: readonly KeyConfig[], halts: readonly HaltRecord[]): string {
  const rows = keys.map((k) => {
    const halted = halts.some((h) => h.key === k.name) ? 'halted' : '-';
    return [k.name, keySetting(k, 'store'), k.class, k.approval, k.pubkey, halted];
  });
  return table([['NAME', 'STORE', 'CLASS', 'APPROVAL', 'PUBKEY', 'HALTED'], ...rows]);
}

/** Rows as columns two spaces apart, each as wide as its widest cell; no trailing blanks. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows.reduce<number[]>((w, r) => r.map((c, i) => Math.max(w[i] ?? 0, c.length)), []);
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One audit entry on one line: when, what, which key, the outcome and amounts, then the (escaped) summary. */
export function renderAuditEntry(e: AuditEntry): string {
  const amount = e.balance_change === null ? '' : `  ${lamportsAndSol(e.balance_change)}`;
  const signature = e.signature === null ? '' : `  ${e.signature}`;
  const detail = e.detail === null ? '' : `  detail: ${showUntrusted(e.detail, 200)}`;
  const intent = e.intent === null ? '' : `  intent: ${showUntrusted(e.intent, 200)}`;
  return (
    `${iso(e.ts)}  ${e.command}  key ${showUntrusted(e.key, 64)}  ${showUntrusted(e.outcome, 32)}${amount}${signature}` +
    `  summary: ${showUntrusted(e.summary, 200)}${intent}${detail}`
  );
}
