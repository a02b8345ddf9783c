/** The JSON report of check and sign (fields in docs/reports.md): every field always present, absent values null. */
import type { TokenFigure } from '../ledger/types';
import type { Reason, RefusalFigures } from './refusals';
import type { CheckName, Outcome, PassName } from './vocabulary';

export { CHECK_NAMES, OUTCOMES, PASS_NAMES, type CheckName, type Outcome, type PassName } from './vocabulary';

export interface Report {
  outcome: Outcome;
  key: string | null;
  signature: string | null;
  slot: number | null;
  explorer: string | null;
  detail: string | null;
  failed_check: CheckName | null;
  /** Why it was not signed, for a program to act on (refusals.ts); null when nothing refused. */
  reason: Reason | null;
  /** The refusal's figures (caps, amounts, addresses) where it has any; null otherwise. */
  figures: RefusalFigures | null;
  program_error: string | null;
  error: unknown;
  checks: PassName[];
  compute_units: number | null;
  fee: number | null;
  /** Who pays the fee (the message's first account): the key, or another account such as an x402 facilitator. */
  fee_payer: string | null;
  balance_change: number | null;
  summary: string;
  warnings: string[];
  payload_hash: string;
  logs: string[];
  /** sign_only: the signed wire transaction (base64) for the caller to send; null otherwise. */
  signed_transaction: string | null;
  /** Whether signing this transaction needs an operator's approval; null until the simulation says its spend. */
  would_need_approval: boolean | null;
  /** The key's daily allowance left after this transaction's spend; null when it is not known. */
  remaining_daily_lamports: number | null;
  /**
   * What the transaction takes out of the key in dollars (a string like "1.503"), for a key with `usd` caps once
   * its spend is valued; null otherwise.
   */
  usd_value: string | null;
  /** What is left of the key's `usd.per_day` after this transaction, in dollars; null without one or unknown. */
  remaining_daily_usd: string | null;
  /** A message payload of format `offchain`: the signed envelope (base64); null otherwise. */
  signed_message: string | null;
  /** What the simulation moved of each mint (the key's change, each other owner's credit); null before it ran. */
  token_changes: ReportTokenChange[] | null;
  /** Each of the key's mints' daily allowance left after this transaction; null when it is not known. */
  remaining_daily_tokens: { mint: string; remaining: string }[] | null;
}

/** A mint's movement as reported: base units as decimal strings, and the key's change in UI units. */
export interface ReportTokenChange extends TokenFigure {
  ui_change: string | null;
}

/** CLI exit codes, one per outcome; 1 is an error with no report. */
export const EXIT_CODES: Record<Outcome, number> = {
  ok: 0,
  confirmed: 0,
  signed: 0,
  refused: 10,
  simulation_failed: 11,
  failed: 12,
  unknown: 14,
};
export const EXIT_ERROR = 1;

/** Outcomes an MCP result reports with isError false. */
export function isSuccessOutcome(o: Outcome): boolean {
  return o === 'ok' || o === 'confirmed' || o === 'signed';
}

export function emptyReport(fields: {
  key: string | null;
  summary: string;
  warnings: string[];
  payload_hash: string;
}): Report {
  return {
    outcome: 'ok',
    key: fields.key,
    signature: null,
    slot: null,
    explorer: null,
    detail: null,
    failed_check: null,
    reason: null,
    figures: null,
    program_error: null,
    error: null,
    checks: [],
    compute_units: null,
    fee: null,
    fee_payer: null,
    balance_change: null,
    summary: fields.summary,
    warnings: fields.warnings,
    payload_hash: fields.payload_hash,
    logs: [],
    signed_transaction: null,
    would_need_approval: null,
    remaining_daily_lamports: null,
    usd_value: null,
    remaining_daily_usd: null,
    token_changes: null,
    remaining_daily_tokens: null,
    signed_message: null,
  };
}
