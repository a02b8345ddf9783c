/**
 * Store-independent pieces of halts and approvals: the audit entries a halt and a resume write, and what a
 * decision or a vote on an approval request leads to. Both stores use these so they behave identically.
 */
import { SignerError } from '../util/errors';
import type {
  ApprovalDecision,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalVote,
  AuditEntryInput,
  HaltRecord,
} from './types';

/**
 * The 'halt' audit entry: the reason as summary, who pulled the brake as detail, and for a halt carried over from
 * an archived ledger, which one (the entry keeps the halt's own time, as the record does).
 */
export function haltEntry(rec: HaltRecord): AuditEntryInput {
  const carried = rec.carried_from === undefined ? '' : `; carried over from the archived ledger ${rec.carried_from}`;
  return {
    ts: rec.ts,
    key: rec.key,
    command: 'halt',
    payload_hash: '',
    programs: [],
    summary: rec.reason,
    intent: null,
    outcome: 'halted',
    detail: `by ${rec.by}${carried}`,
    signature: null,
    slot: null,
    balance_change: null,
  };
}

/** The 'resume' audit entry: the reason of the halt being lifted as summary, so it reads on its own. */
export function resumeEntry(key: string, by: string, ts: number, lifted: HaltRecord): AuditEntryInput {
  return {
    ts,
    key,
    command: 'resume',
    payload_hash: '',
    programs: [],
    summary: lifted.reason,
    intent: null,
    outcome: 'resumed',
    detail: `by ${by}`,
    signature: null,
    slot: null,
    balance_change: null,
  };
}

/** Who may vote, for messages: the approvers' names, or "any operator". */
function allowedList(rec: Pick<ApprovalRecord, 'approvers'>): string {
  return rec.approvers === null ? 'any operator' : rec.approvers.join(', ');
}

/**
 * A decision on a request, as the stores apply it inside their write transaction: the record as it stands
 * afterwards and whether it changed (to be written). Both stores use this, so quorums count the same everywhere.
 *
 * - A vote (`approved`/`rejected`) by someone who is not one of the request's approvers is refused, whatever the
 *   request's state: an operator learns at once that the name is wrong.
 * - Only a pending request changes. A decision after `expires_at` does not count: the request becomes `expired`
 *   with no decider (nobody approved or rejected it in time).
 * - A rejection by any approver ends it (`rejected`, decided by that operator), even after the same operator
 *   approved: a reject always counts. A second approval by the same operator is not counted again (not recorded).
 * - It is `approved` once `required` distinct approvers approved; decided_by then names them in vote order.
 */
export function applyDecision(
  rec: ApprovalRecord,
  decision: ApprovalDecision,
  by: string,
  ts: number,
  credential: string | null,
): { record: ApprovalRecord; changed: boolean } {
  const vote = decision === 'approved' || decision === 'rejected';
  if (vote) checkVoter(by, credential);
  if (vote && rec.approvers !== null && !rec.approvers.includes(by)) {
    throw new SignerError(
      'request_invalid',
      `${JSON.stringify(by)} is not an approver of approval ${rec.id} (key ${rec.key}); its approvers: ${allowedList(rec)}`,
    );
  }
  if (rec.status !== 'pending') return { record: rec, changed: false };
  const close = (status: ApprovalStatus, decidedBy: string | null, votes = rec.votes) => ({
    record: { ...rec, status, decided_by: decidedBy, decided_at: ts, votes },
    changed: true,
  });
  if (decision === 'expired' || ts > rec.expires_at) return close('expired', null);
  if (decision === 'abandoned') return close('abandoned', by);
  const already = rec.votes.some((v) => v.operator === by && v.decision === decision);
  if (already) return { record: rec, changed: false };
  const votes = [...rec.votes, { operator: by, decision, ts, credential }];
  if (decision === 'rejected') return close('rejected', by, votes);
  const approvers = approvedBy(votes);
  if (approvers.length >= rec.required) return close('approved', approvers.join(', '), votes);
  return { record: { ...rec, votes }, changed: true };
}

/** Longest operator name (config names are at most 32) and credential id (WebAuthn's are at most 1023 bytes) a vote may carry. */
const MAX_VOTER = 64;
const MAX_CREDENTIAL = 1400;

/** A vote's names are stored in the request and the audit log: bounded, so no caller can bloat either. */
function checkVoter(by: string, credential: string | null): void {
  if (by.length === 0 || by.length > MAX_VOTER)
    throw new SignerError('request_invalid', `an operator name is 1 to ${MAX_VOTER} characters`);
  if (credential !== null && (credential.length === 0 || credential.length > MAX_CREDENTIAL))
    throw new SignerError('request_invalid', `a credential id is 1 to ${MAX_CREDENTIAL} characters`);
}

/** The distinct operators who approved, in the order they voted. */
export function approvedBy(votes: readonly ApprovalVote[]): string[] {
  return [...new Set(votes.filter((v) => v.decision === 'approved').map((v) => v.operator))];
}
