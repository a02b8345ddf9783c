/**
 * The engine's face: what every entrypoint (CLI, MCP service) calls. It knows nothing of HTTP or MCP.
 * Failures that are not a report (a payload that does not parse, an RPC failure before anything was sent,
 * an unknown key) reject with a SignerError carrying a code and a user-actionable message.
 */
import type { TreasuryReconciler } from '../treasury/reconcile';
import type { TreasuryStatus } from '../treasury/status';
import type { StoreState } from '../keys/key-status';
import type { ApprovalMode, KeyClass } from '../config/types';
import type { KeyProblem } from '../keys/key-set';
import type { ApprovalRecord } from '../ledger/types';
import type { Refusal } from './refusals';
import type { Report } from './report';

/**
 * The spend checks of a credential the agent presented (docs/credentials.md), judged on a simulation's figures:
 * null when they pass, else what refused (the credential's block and check, in words).
 */
export type CredentialSpendCheck = (spend: {
  key: string;
  lamports_out: number;
  destinations: readonly string[];
  /** Micro-dollars out, when the spend was valued. */
  usd_micros_out?: number;
  /** Base units out of each mint the key loses. */
  tokens_out?: readonly { mint: string; amount: number }[];
}) => { message: string } | null;

/** A presented credential's spend checks, and its first block that limits dollars (null: none does). */
export interface CredentialSpend {
  check: CredentialSpendCheck;
  usdLimitedBy: number | null;
}

/** One block of a presented credential, as `key_show` shows it and the audit log names it. */
export interface CredentialBlock {
  /** 0 is the root; the first narrowing is 1. */
  block: number;
  /** Its revocation id (hex): what `token revoke` and `serve.credentials.revoked` take. */
  revocation_id: string;
  /** Its checks, as the credential states them (Datalog, one per line). */
  checks: string[];
}

/**
 * A block's daily budgets (`check if per_day_lamports(N)`, `check if per_day_usd_micros(N)`), kept in the ledger under
 * its revocation id; a block states one or both.
 */
export interface CredentialBudget {
  block: number;
  revocation_id: string;
  /** Lamports its signs may reserve and spend in 24 h, all keys together (the smallest, if it states several). */
  per_day_lamports: number | null;
  /** Micro-dollars its signs may reserve and spend in 24 h, on the value each intent recorded; null: none. */
  per_day_usd_micros: bigint | null;
}

/** A block's budget as `key_show` shows it: the budget, what its signs spent or reserved in 24 h, what is left. */
export interface BudgetView {
  block: number;
  revocation_id: string;
  per_day_lamports: number | null;
  spent_or_reserved_24h: number;
  remaining_lamports: number | null;
  /** Dollars (`"20.00"`) of the dollar budget, what its signs recorded in 24 h, and what is left; null without one. */
  per_day_usd: string | null;
  spent_or_reserved_usd_24h: string | null;
  remaining_usd: string | null;
}

/**
 * A credential the agent presented and that allowed the request (docs/credentials.md): which one (its root's name
 * and its chain of blocks, so two sub-agents of one root are told apart), its spend checks and its blocks' budgets.
 */
export interface PresentedCredential {
  /** The issued root's name (the principal's name). */
  root: string;
  /** Its blocks, root first; the last one is this credential's own. */
  blocks: readonly CredentialBlock[];
  spend: CredentialSpendCheck;
  /** The budgets of the blocks that state one, in block order: a sign must fit every one. */
  budgets: readonly CredentialBudget[];
  /** The first block that limits dollars (per transaction or per day), or null: such a sign must be valued. */
  usd_limited_by: number | null;
}

/** Who asks: an agent's token (may touch only its keys), or an operator (every key: the host's CLI unnamed, a named
 * one from the console). A token that is a credential carries it. */
export type Principal =
  | { kind: 'token'; name: string; keys: readonly string[]; credential?: PresentedCredential }
  | { kind: 'operator'; name?: string };

/** The principal's credential spend checks, if it presented a credential. */
export function credentialSpendCheck(p: Principal): CredentialSpend | undefined {
  if (p.kind !== 'token' || p.credential === undefined) return undefined;
  return { check: p.credential.spend, usdLimitedBy: p.credential.usd_limited_by };
}

/** Whether the principal's credential limits dollars: its signs must then be valued, on any key. */
export function credentialLimitsUsd(p: Principal): boolean {
  return p.kind === 'token' && (p.credential?.usd_limited_by ?? null) !== null;
}

/** The budgets a sign by this principal must fit (none for a bearer token or an operator). */
export function credentialBudgets(p: Principal): readonly CredentialBudget[] {
  return p.kind === 'token' ? (p.credential?.budgets ?? []) : [];
}

/**
 * What an audit entry says of a credential that asked: its root's name, its own block and that block's revocation
 * id (in full: what `token revoke` takes), so an operator tells sub-agents of one root apart. Null for anyone else.
 */
export function credentialNote(p: Principal): string | null {
  if (p.kind !== 'token' || p.credential === undefined) return null;
  const own = p.credential.blocks[p.credential.blocks.length - 1];
  if (own === undefined) return null;
  const which = own.block === 0 ? 'its root block' : `block ${own.block}`;
  return `by credential "${p.credential.root}", ${which} (revocation id ${own.revocation_id})`;
}

export function principalLabel(p: Principal): string {
  if (p.kind === 'token') return `token:${p.name}`;
  return p.name === undefined ? 'operator' : `operator:${p.name}`;
}

export interface CheckInput {
  payload: unknown; // the payload object (or its JSON text, from the CLI)
  key?: string | null;
  principal: Principal;
  signal?: AbortSignal;
}

/** `send` (the default): the signer sends and confirms; `sign_only`: it returns the signed bytes (docs/payloads.md). */
export type SignMode = 'send' | 'sign_only';

export interface SignInput extends CheckInput {
  intent?: string | null;
  mode?: SignMode | null;
  /** Live progress of a long sign (waiting for the lock, an approval, confirmation). */
  onProgress?: (p: SignProgress) => void;
}

export type SignProgress =
  | { stage: 'lock' }
  | {
      stage: 'approval';
      approval_id: string;
      expires_at: number;
      /** True when a sign of the same payload had asked already: this one waits on that pending request. */
      joined: boolean;
      /** Distinct approvals it takes: a count, never the operators' names (an agent may read progress). */
      required: number;
    }
  | { stage: 'sent'; signature: string }
  | { stage: 'confirming'; signature: string; polls: number; elapsed_ms: number; status: string | null };

export interface KeyView {
  name: string;
  pubkey: string;
  class: KeyClass;
  approval: ApprovalMode;
  profile: string | null;
  balance_lamports: number | null; // null when the RPC failed
  rate_limit_per_minute: number;
  daily_lamport_cap: number;
  signs_last_minute: number;
  spent_or_reserved_24h: number;
  halted: { reason: string; by: string; ts: number } | null;
  /** Whether the key signs off-chain messages and sign-in texts (config `sign_messages`). */
  sign_messages: boolean;
  /**
   * Whether its store can sign with the key now (keys/key-status.ts): the state only, never why, which may name
   * where the key lives; the operator's `key show` says why.
   */
  store_status: StoreState;
  /** What an agent needs to plan a sign (docs/policy.md): never where the key file lives. */
  policy: KeyPolicyView;
}

export interface KeyPolicyView {
  per_tx_lamports: number | null;
  max_fee_lamports: number | null;
  approve_above_lamports: number | null;
  /** How many distinct operators must approve a sign that needs approval; null when the key never asks one. */
  approvals_required: number | null;
  remaining_daily_lamports: number;
  /** Most lamports one account may receive from the key in 24 h; null: no such cap. */
  per_destination_per_day_lamports: number | null;
  /** The key's dollar caps and what is left of them today (dollar strings); null for a key without `usd` caps. */
  usd: {
    per_tx: string | null;
    per_day: string | null;
    approve_above: string | null;
    spent_or_reserved_24h: string;
    remaining_daily: string | null;
  } | null;
  /** System transfer and lamport destinations. */
  transfer_to: string[];
  /** Top-level programs this key may call: the cluster's, the key's extras and the ones every key may call. */
  programs: string[];
  sign_only: boolean;
  allow_token_ops: string[];
  /** Each mint the key may spend, amounts in base units as decimal strings. */
  tokens: {
    mint: string;
    program: string;
    per_tx: string | null;
    per_day: string;
    spent_or_reserved_24h: string;
    remaining_daily: string;
    destinations: string[] | null;
    per_destination_per_day: string | null;
    approve_above: string | null;
  }[];
}

export interface HaltResult {
  halted: { key: string; reason: string; by: string; ts: number; already_halted: boolean }[];
  /**
   * Keys the ledger could not record a halt for (the tool then reports isError). This process still refuses signs
   * for them and writes the halt to the ledger as soon as it can.
   */
  not_recorded: { key: string; error: string }[];
}

export interface SignerEngine {
  check(input: CheckInput): Promise<Report>;
  sign(input: SignInput): Promise<Report>;
  /** With no key: every key the principal may use, in name order. */
  keyShow(input: { key?: string | null; principal: Principal }): Promise<KeyView[]>;
  /** The daily budgets of the credential the principal presented, with each block's usage now (none without one). */
  budgetsShow(principal: Principal): Promise<BudgetView[]>;
  /** With no key: every key the principal may use. */
  halt(input: { key?: string | null; reason: string; principal: Principal }): Promise<HaltResult>;
  /**
   * Operator only (never over MCP). Lifts a halt held in this process too; false when the key was not halted. `by`
   * names who lifted it in the audit log (default `operator`, the host's CLI).
   */
  resume(key: string, by?: string): Promise<boolean>;
  /**
   * Operator only: what the policy in force now would refuse of a pending approval's figures (null: nothing), for
   * the approver to see before deciding.
   */
  policyNow(approval: ApprovalRecord): Promise<Refusal | null>;
  /** Every key its store cannot open (a missing or loose file, a wrong passphrase, a token without it); empty when all can sign. */
  verifyKeys(): Promise<KeyProblem[]>;
  /** Readiness: the ledger answers, the RPC is on the cluster's genesis, and every key's store can sign with it. */
  ready(): Promise<{ ok: boolean; detail: Record<string, string> }>;
  /** Signs running now (for drain). */
  inFlight(): number;
  /** One reconciliation pass over the treasury keys (docs/treasury.md); halts and notifies on a foreign spend. */
  reconcileTreasuries(): ReturnType<TreasuryReconciler['reconcile']>;
  /**
   * Every treasury key as the chain holds it now, with the plan for the next period (docs/treasury.md): for the
   * operator console, never an agent's tool.
   */
  treasuryShow(): Promise<TreasuryStatus[]>;
  close(): Promise<void>;
}
