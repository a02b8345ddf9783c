/**
 * The operators' approval for a `confirm` key: the sign asks the ledger for a request and waits, up to
 * `timings.approval_timeout_ms`, until its status is decided: approved once the key's quorum of distinct approvers
 * approved (`sa-forge-signer approvals approve ID --as NAME`, or the console), rejected as soon as one of them
 * rejects, expired at the deadline.
 *
 * A sign of the same payload (same key, same payload hash) while a request for it is pending gets that request,
 * not a new one: an agent whose call ran out before the operators decided signs again and waits on the votes already
 * cast. The request then belongs to the newest sign: an earlier one still waiting stops (nothing sent, refused as
 * superseded), so one approval never sends twice. If the sign waiting on it goes away (its caller disconnected,
 * as a client whose request timed out does), the request is marked `abandoned`: nothing is sent, the sign's final
 * audit entry says why, and a later approve is refused with the same explanation, until the agent signs the same
 * payload again before the deadline: that reopens the request, with the votes already cast.
 */
import { randomUUID } from 'node:crypto';
import type { KeyConfig, Timings } from '../../config/types';
import type { ApprovalRecord, Ledger } from '../../ledger/types';
import { approvedBy } from '../../ledger/records';
import { approvalAtDeadline, approvalNow } from './approval-now';
import { approvalDecided, approvalRequested } from '../../notify/events';
import type { Notifier } from '../../notify/outbox';
import { errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { EngineLogger } from '../engine-deps';
import {
  approvalAbandonedRefusal,
  approvalStanding,
  GONE,
  standingAtDeadline,
} from '../policy/rules/approval-standing';
import type { Report } from '../report';
import type { Principal, SignProgress } from '../types';
import { principalLabel } from '../types';
import type { LamportGain } from './simulate';
import { stop, type StepWith } from './step';

export interface ApprovalDeps {
  ledger: Ledger;
  timings: Timings;
  log: EngineLogger;
  /** Told when a request is made and when its final status is known (webhooks). */
  notify?: Notifier;
  /** The operators configured now, whose votes may count (null: none are); absent: as null. */
  voters?: () => readonly string[] | null;
}

export interface ApprovalInput {
  principal: Principal;
  key: KeyConfig;
  summary: string;
  payloadHash: string;
  report: Report;
  progress: (p: SignProgress) => void;
  signal: AbortSignal | undefined;
  /**
   * A transaction: its top-level programs and the accounts its simulation credits (the console shows them; whether
   * each is new and who owns it tell the destination rule's rent exemption).
   */
  programs?: readonly string[];
  destinations?: readonly LamportGain[];
  /** A message sign: the text the operator approves (shown escaped by `approvals list`). */
  message?: string | null;
  /** A message sign: what the text is (format, application domain, signatories), shown above it. */
  messageDescription?: string | null;
}

/** What the CLI says when an operator's decision comes too late for the request. */
export function approvalClosedMessage(record: ApprovalRecord, wanted: 'approved' | 'rejected'): string {
  if (record.status === 'abandoned') return `approval ${record.id} cannot be ${wanted}: ${GONE}`;
  return `approval ${record.id} is ${record.status}; it can no longer be ${wanted}`;
}

/** What a key's sign waits for, for `check`'s answer: the count, never the operators' names (an agent reads it). */
export function approvalNeeded(key: KeyConfig): string {
  const required = key.approvals?.required ?? 1;
  return required === 1 ? "an operator's approval" : `the approval of ${required} of its operators`;
}

/** `1 of 2: alice`: the approvals counted so far against the quorum. */
export function votesSoFar(record: ApprovalRecord): string {
  const names = approvedBy(record.votes);
  return `${names.length} of ${record.required}${names.length > 0 ? `: ${names.join(', ')}` : ''}`;
}

/**
 * Who approved, for the sign's final audit entry: each approver with the passkey credential it voted with (none
 * from the host's CLI).
 */
export function approvalNote(record: ApprovalRecord): string {
  const approvals = record.votes.filter((v) => v.decision === 'approved' && v.not_counted === undefined);
  const who = approvals.map((v) => (v.credential === null ? v.operator : `${v.operator} (credential ${v.credential})`));
  return `approval ${record.id} approved by ${who.length > 0 ? who.join(', ') : (record.decided_by ?? 'an operator')}`;
}

/** Asks for the operators' approval and waits for it; the hooks hear of the request and of its final status. */
export async function awaitApproval(
  deps: ApprovalDeps,
  input: ApprovalInput,
): Promise<StepWith<{ approval: ApprovalRecord }>> {
  const asked: { id: string | null } = { id: null };
  const progress = (p: SignProgress): void => {
    if (p.stage === 'approval') asked.id = p.approval_id;
    input.progress(p);
  };
  const step = await requestAndWait(deps, { ...input, progress });
  if (asked.id !== null) await notifyDecided(deps, asked.id);
  return step;
}

/** Tells the hooks the request's final status as the ledger holds it (a quorum's decision, expired, abandoned). */
async function notifyDecided(deps: ApprovalDeps, id: string): Promise<void> {
  if (!deps.notify) return;
  const final = await deps.ledger.getApproval(id).catch(() => null);
  if (final && final.status !== 'pending') await deps.notify.emit(approvalDecided(final));
}

async function requestAndWait(
  deps: ApprovalDeps,
  input: ApprovalInput,
): Promise<StepWith<{ approval: ApprovalRecord }>> {
  const { ledger, timings, log } = deps;
  const { key, report, signal } = input;
  const now = nowSeconds();
  const waiter = randomUUID();
  const { record, joined } = await ledger.requestApproval({
    key: key.name,
    summary: input.summary,
    payload_hash: input.payloadHash,
    balance_change: report.balance_change,
    fee: report.fee,
    compute_units: report.compute_units,
    tokens: report.token_changes?.map(({ mint, decimals, change, credits }) => ({ mint, decimals, change, credits })),
    programs: input.programs ? [...input.programs] : null,
    destinations:
      input.destinations?.map(({ address, lamports, created, owner }) => ({ address, lamports, created, owner })) ??
      null,
    fee_payer: report.fee_payer,
    usd_value: report.usd_value ?? null,
    requested_by: principalLabel(input.principal),
    ts: now,
    expires_at: now + Math.ceil(timings.approval_timeout_ms / 1000),
    message: input.message ?? null,
    message_description: input.messageDescription ?? null,
    required: key.approvals?.required ?? 1,
    approvers: key.approvals?.approvers ?? null,
    waiter,
  });
  input.progress({
    stage: 'approval',
    approval_id: record.id,
    expires_at: record.expires_at,
    joined,
    required: record.required,
  });
  log.info(
    { key: key.name, approval: record.id, joined, required: record.required },
    joined
      ? 'the same payload signed again: waiting on its pending approval'
      : 'waiting for operators: sa-forge-signer approvals approve|reject ID',
  );
  // A request joined by a later sign of the same payload was announced when it was made.
  if (!joined) await deps.notify?.emit(approvalRequested(record));

  // A joined request keeps the deadline it was opened with.
  const deadline = joined ? record.expires_at * 1000 : Date.now() + timings.approval_timeout_ms;
  const voters = () => deps.voters?.() ?? null;
  for (;;) {
    if (signal?.aborted) return abandon(deps, record.id, waiter, report);
    const current = (await approvalNow(ledger, record.id, voters())) ?? record;
    const now = approvalStanding(current, waiter, timings.approval_timeout_ms);
    if (now.outcome === 'refused') return stop(report, now.refusal);
    if (now.outcome === 'approved') return { ok: true, approval: current };
    if (Date.now() >= deadline) {
      // Approved in the last instant, and still this sign's to send; else it was not in time.
      const last = (await approvalAtDeadline(ledger, record.id, voters())) ?? current;
      const end = standingAtDeadline(last, waiter, timings.approval_timeout_ms);
      return end.outcome === 'approved' ? { ok: true, approval: last } : stop(report, end.refusal);
    }
    await pause(Math.min(timings.approval_poll_ms, Math.max(1, deadline - Date.now())), signal);
  }
}

/**
 * The caller is gone: nothing may be sent for it, even if an operator approves at this very moment. The request is
 * abandoned unless a later sign of the same payload waits on it now.
 */
async function abandon(deps: ApprovalDeps, id: string, waiter: string, report: Report) {
  const marked = await deps.ledger.leaveApproval(id, waiter, nowSeconds()).catch((e: unknown) => {
    deps.log.error({ approval: id, err: errorMessage(e) }, 'could not mark an abandoned approval request');
    return null;
  });
  const status = marked?.status ?? 'pending';
  const note = status === 'abandoned' ? '' : ` (it stands as ${status} in the ledger)`;
  return stop(report, approvalAbandonedRefusal(id, note));
}

/** Sleeps, waking early when the request is aborted. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
