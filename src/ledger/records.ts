/**
 * Store-independent pieces of halts and approvals: the audit entries a halt and a resume write, and what a
 * decision or a vote on an approval request leads to. Both stores use these so they behave identically.
 */
import { SignerError } from '../util/errors';
import type { OperatorStanding } from './operators';
import type {
  ApprovalDecision,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalVote,
  AuditEntryInput,
  HaltRecord,
  NotCounted,
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
 * Whose votes count when a quorum is judged: the operators configured now (the caller's policy, passed as data;
 * null: none are, and the host's single operator decides) and the revocations the ledger holds (read in the same
 * transaction as the decision).
 */
export interface Electorate {
  configured: ReadonlySet<string> | null;
  standings: ReadonlyMap<string, OperatorStanding>;
}

/** The `voters` a caller passes for the operators configured now: their names, or null when there are none. */
export function votersOf(operators: readonly { name: string }[]): string[] | null {
  return operators.length === 0 ? null : operators.map((o) => o.name);
}

export function electorate(configured: readonly string[] | null, standings: readonly OperatorStanding[]): Electorate {
  return {
    configured: configured === null ? null : new Set(configured),
    standings: new Map(standings.map((s) => [s.operator, s])),
  };
}

/**
 * Why a vote does not count now, or null when it does. A revocation voids every vote its operator cast up to it
 * (in the same second too: a vote and a revocation within one second are taken as vote first), even after an
 * enrollment reinstated them: whatever their credentials did before they were revoked is not trusted.
 */
export function notCounted(vote: Pick<ApprovalVote, 'operator' | 'ts'>, e: Electorate): NotCounted | null {
  if (e.configured !== null && !e.configured.has(vote.operator)) return 'not_configured';
  const standing = e.standings.get(vote.operator);
  if (standing?.revoked_at == null) return null;
  if (standing.reinstated_at === null || vote.ts <= standing.revoked_at) return 'revoked';
  return null;
}

/** The votes, each marked with why it does not count now (unmarked: it counts). */
function marked(votes: readonly ApprovalVote[], e: Electorate): ApprovalVote[] {
  return votes.map((cast) => {
    const vote: ApprovalVote = {
      operator: cast.operator,
      decision: cast.decision,
      ts: cast.ts,
      credential: cast.credential,
    };
    const why = notCounted(vote, e);
    return why === null ? vote : { ...vote, not_counted: why };
  });
}

const VOTER_GONE: Record<NotCounted, string> = {
  not_configured: 'is no longer under operators in the config',
  revoked: 'is revoked (sa-forge-signer operator revoke); a new passkey enrollment reinstates them',
};

/**
 * A decision on a request, as the stores apply it inside their write transaction: the record as it stands
 * afterwards and whether it changed (to be written). Both stores use this, so quorums count the same everywhere.
 *
 * - A vote (`approved`/`rejected`) by someone who is not one of the request's approvers, or whose vote would not
 *   count (not configured now, revoked), is refused, whatever the request's state: an operator learns at once that
 *   the name is wrong.
 * - Only a pending request changes. A decision after `expires_at` does not count: the request becomes `expired`
 *   with no decider (nobody approved or rejected it in time).
 * - A rejection by any approver ends it (`rejected`, decided by that operator), even after the same operator
 *   approved: a reject always counts. A second approval by the same operator is not counted again (not recorded).
 * - Votes of operators removed from the config or revoked since are kept, marked `not_counted`, and do not count.
 * - It is `approved` once `required` distinct approvers whose votes count approved; decided_by then names them in
 *   vote order.
 */
export function applyDecision(
  rec: ApprovalRecord,
  decision: ApprovalDecision,
  by: string,
  ts: number,
  credential: string | null,
  voters: Electorate,
): { record: ApprovalRecord; changed: boolean } {
  const vote = decision === 'approved' || decision === 'rejected';
  if (vote) checkVoter(by, credential);
  if (vote && rec.approvers !== null && !rec.approvers.includes(by)) {
    throw new SignerError(
      'request_invalid',
      `${JSON.stringify(by)} is not an approver of approval ${rec.id} (key ${rec.key}); its approvers: ${allowedList(rec)}`,
    );
  }
  const gone = vote ? notCounted({ operator: by, ts }, voters) : null;
  if (gone !== null)
    throw new SignerError(
      'request_invalid',
      `operator ${JSON.stringify(by)} ${VOTER_GONE[gone]}: their vote would not count`,
    );
  if (rec.status !== 'pending') return { record: rec, changed: false };
  const close = (status: ApprovalStatus, decidedBy: string | null, votes = rec.votes) => ({
    record: { ...rec, status, decided_by: decidedBy, decided_at: ts, votes },
    changed: true,
  });
  if (decision === 'expired' || ts > rec.expires_at) return close('expired', null);
  if (decision === 'abandoned') return close('abandoned', by);
  const cast = marked(rec.votes, voters);
  const already = cast.some((v) => v.operator === by && v.decision === decision && v.not_counted === undefined);
  if (already) return { record: rec, changed: false };
  const votes = [...cast, { operator: by, decision, ts, credential }];
  if (decision === 'rejected') return close('rejected', by, votes);
  const approvers = approvedBy(votes);
  if (approvers.length >= rec.required) return close('approved', approvers.join(', '), votes);
  return { record: { ...rec, votes }, changed: true };
}

/**
 * An approved request judged again when its sign takes it, with whose votes count at that moment: still approved
 * while the approvals that count reach the quorum (decided_by naming them); otherwise pending again with its votes
 * (those that no longer count marked), to wait for others before its deadline, or expired past it. Only an approved
 * request changes.
 */
export function recountDecision(
  rec: ApprovalRecord,
  voters: Electorate,
  ts: number,
): { record: ApprovalRecord; changed: boolean } {
  if (rec.status !== 'approved') return { record: rec, changed: false };
  const votes = marked(rec.votes, voters);
  const approvers = approvedBy(votes);
  const unchanged = votes.every((v, i) => v.not_counted === rec.votes[i]?.not_counted);
  if (approvers.length >= rec.required) {
    const decidedBy = approvers.join(', ');
    if (unchanged && decidedBy === rec.decided_by) return { record: rec, changed: false };
    return { record: { ...rec, votes, decided_by: decidedBy }, changed: true };
  }
  const expired = ts > rec.expires_at;
  return {
    record: {
      ...rec,
      votes,
      status: expired ? 'expired' : 'pending',
      decided_by: null,
      decided_at: expired ? ts : null,
    },
    changed: true,
  };
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

/** The distinct operators whose approvals count (as last judged), in the order they voted. */
export function approvedBy(votes: readonly ApprovalVote[]): string[] {
  return [
    ...new Set(votes.filter((v) => v.decision === 'approved' && v.not_counted === undefined).map((v) => v.operator)),
  ];
}
