/**
 * What a webhook is told, one builder per event (docs/notifications.md lists the fields). The body follows the
 * Standard Webhooks shape `{type, timestamp, data}`. `data` holds the figures the signer computed (amounts in
 * lamports and base units, the fee, destinations where known) and never a secret: no token, no key material, no URL.
 * Text an agent (or whoever halted) wrote is bounded, escaped, and carried as `{text, written_by, verified: false}`
 * so a receiver cannot mistake it for the signer's own words.
 */
import type { NotifyEvent } from '../config/types';
import { approvedBy } from '../ledger/records';
import type { ApprovalRecord, HaltRecord, TokenFigure } from '../ledger/types';
import { showUntrusted } from '../util/untrusted';

/** The longest piece of someone else's text an event carries (escaped; longer is cut and says how much). */
export const NOTIFY_TEXT_MAX = 280;

export interface NotificationEvent {
  type: NotifyEvent;
  /** ISO 8601, when the event happened. */
  timestamp: string;
  data: Record<string, unknown>;
  /**
   * Names an event that happens once however many processes report it (an approval's decision, told by the
   * deciding CLI or console and by the sign that waited on it): the outbox keeps one notification per hook for it.
   * Not part of the body.
   */
  once?: string;
}

/** Someone else's words, marked as such. */
export interface UnverifiedText {
  text: string;
  written_by: string;
  verified: false;
}

export function unverified(text: string, writtenBy: string): UnverifiedText {
  return { text: showUntrusted(text, NOTIFY_TEXT_MAX), written_by: writtenBy, verified: false };
}

const iso = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

/** Token figures as the ledger keeps them, and the owners credited (the destinations the simulation saw). */
function tokenData(tokens: readonly TokenFigure[] | null | undefined) {
  const list = (tokens ?? []).map(({ mint, decimals, change, credits }) => ({ mint, decimals, change, credits }));
  return { tokens: list, destinations: [...new Set(list.flatMap((t) => t.credits.map((c) => c.owner)))] };
}

function approvalData(r: ApprovalRecord): Record<string, unknown> {
  return {
    key: r.key,
    approval_id: r.id,
    status: r.status,
    payload_hash: r.payload_hash,
    balance_change_lamports: r.balance_change,
    fee_lamports: r.fee,
    compute_units: r.compute_units,
    ...tokenData(r.tokens),
    required: r.required,
    approvers: r.approvers,
    approved_by: approvedBy(r.votes),
    requested_by: r.requested_by,
    requested_at: iso(r.ts),
    expires_at: iso(r.expires_at),
    message_description: r.message_description ?? null,
    summary: unverified(r.summary, r.requested_by),
  };
}

export function approvalRequested(r: ApprovalRecord): NotificationEvent {
  return { type: 'approval.requested', timestamp: iso(r.ts), data: approvalData(r) };
}

/** The request's final status: approved, rejected, expired or abandoned. */
export function approvalDecided(r: ApprovalRecord): NotificationEvent {
  const at = r.decided_at ?? Math.floor(Date.now() / 1000);
  return {
    type: 'approval.decided',
    timestamp: iso(at),
    data: { ...approvalData(r), decided_by: r.decided_by, decided_at: iso(at) },
    once: `approval.decided:${r.id}`,
  };
}

export function keyHalted(h: HaltRecord): NotificationEvent {
  return {
    type: 'key.halted',
    timestamp: iso(h.ts),
    data: { key: h.key, halted_by: h.by, halted_at: iso(h.ts), reason: unverified(h.reason, h.by) },
  };
}

export function keyResumed(key: string, by: string, ts: number): NotificationEvent {
  return { type: 'key.resumed', timestamp: iso(ts), data: { key, resumed_by: by, resumed_at: iso(ts) } };
}

/**
 * What a refused sign's report says that its event carries. Declared here, not imported from the signer, so the
 * notifier stays below the signer: the signer's report has these fields and passes as it is.
 */
export interface RefusedSignReport {
  key: string | null;
  failed_check: string | null;
  reason: string | null;
  figures: Readonly<Record<string, unknown>> | null;
  detail: string | null;
  payload_hash: string;
  balance_change: number | null;
  fee: number | null;
  remaining_daily_lamports: number | null;
  token_changes: readonly TokenFigure[] | null;
  remaining_daily_tokens: readonly { mint: string; remaining: string }[] | null;
  summary: string;
}

/**
 * A sign the key's caps refused (rate, per-transaction, daily, fee or token caps): nothing was sent. `heldBack`:
 * refusals of the key since the last such event that were not notified (at most one a minute per key and process).
 */
export function signRefusedByCap(
  report: RefusedSignReport,
  requestedBy: string,
  ts: number,
  heldBack = 0,
): NotificationEvent {
  return {
    type: 'sign.refused_by_cap',
    timestamp: iso(ts),
    data: {
      key: report.key,
      failed_check: report.failed_check,
      reason: report.reason,
      figures: report.figures,
      detail: report.detail,
      payload_hash: report.payload_hash,
      balance_change_lamports: report.balance_change,
      fee_lamports: report.fee,
      remaining_daily_lamports: report.remaining_daily_lamports,
      ...tokenData(report.token_changes),
      remaining_daily_tokens: report.remaining_daily_tokens,
      requested_by: requestedBy,
      summary: unverified(report.summary, requestedBy),
      refusals_not_notified: heldBack,
    },
  };
}
