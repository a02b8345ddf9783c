/**
 * Store-independent pieces of halts and approvals: the audit entries a halt and a resume write, and what a
 * decision on an approval request leads to. Both stores use these so they behave identically.
 */
import type { ApprovalDecision, ApprovalRecord, ApprovalStatus, AuditEntryInput, HaltRecord } from './types';

/** The 'halt' audit entry: the reason as summary, who pulled the brake as detail. */
export function haltEntry(rec: HaltRecord): AuditEntryInput {
  return {
    ts: rec.ts,
    key: rec.key,
    command: 'halt',
    payload_hash: '',
    programs: [],
    summary: rec.reason,
    intent: null,
    outcome: 'halted',
    detail: `by ${rec.by}`,
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

/**
 * The status a decision on a pending request leads to. A decision after `expires_at` does not count: the request
 * becomes 'expired' with no decider (nobody approved or rejected it in time).
 */
export function decisionOutcome(
  rec: Pick<ApprovalRecord, 'expires_at'>,
  decision: ApprovalDecision,
  by: string,
  ts: number,
): { status: ApprovalStatus; decidedBy: string | null } {
  if (decision === 'expired' || ts > rec.expires_at) return { status: 'expired', decidedBy: null };
  return { status: decision, decidedBy: by };
}
