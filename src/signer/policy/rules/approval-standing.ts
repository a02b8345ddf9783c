/**
 * What the state of an approval request means for the sign waiting on it: send on, refuse, or keep waiting. The
 * operators' decision and the request's deadline are judged here; the flow (flow/approval.ts) reads the request
 * and waits. An agent reads these refusals: they give counts, never the operators' names.
 */
import type { ApprovalRecord } from '../../../ledger/types';
import { approvedBy } from '../../../ledger/records';
import { seconds } from '../../flow/step';
import { refusal, type Refusal } from '../../refusals';

export const GONE = 'the request that asked for it is gone (its caller disconnected or gave up); nothing was sent';

type Ended = { outcome: 'approved' } | { outcome: 'refused'; refusal: Refusal };
export type Standing = Ended | { outcome: 'waiting' };

/** `1 of 2 approvals`, for a sign's refusal: a count, since an agent reads it and never learns operators' names. */
function approvalsSoFar(record: ApprovalRecord): string {
  return `${approvedBy(record.votes).length} of ${record.required} approvals`;
}

const mine = (current: ApprovalRecord, waiter: string): boolean => current.waiter === null || current.waiter === waiter;

/** The request as it stands for the sign that waits on it as `waiter`, while it may still wait. */
export function approvalStanding(current: ApprovalRecord, waiter: string, timeoutMs: number): Standing {
  // Who rejected is in the ledger and the audit log for the operators; the agent learns only that one did.
  if (current.status === 'rejected') {
    const r = refusal('approval_rejected', `not approved: an operator rejected request ${current.id}`, {
      approval_id: current.id,
    });
    return { outcome: 'refused', refusal: r };
  }
  if (current.status === 'abandoned') return { outcome: 'refused', refusal: approvalAbandonedRefusal(current.id, '') };
  if (!mine(current, waiter)) return { outcome: 'refused', refusal: supersededRefusal(current) };
  if (current.status === 'approved') return { outcome: 'approved' };
  if (current.status === 'expired') return { outcome: 'refused', refusal: approvalTimeoutRefusal(current, timeoutMs) };
  return { outcome: 'waiting' };
}

/** The sign's wait is over: anything but an approval still its own to send (one in the last instant) is a timeout. */
export function standingAtDeadline(last: ApprovalRecord, waiter: string, timeoutMs: number): Ended {
  return last.status === 'approved' && mine(last, waiter)
    ? { outcome: 'approved' }
    : { outcome: 'refused', refusal: approvalTimeoutRefusal(last, timeoutMs) };
}

function approvalTimeoutRefusal(last: ApprovalRecord, timeoutMs: number): Refusal {
  const within = `within ${seconds(timeoutMs)} s`;
  const message =
    approvedBy(last.votes).length === 0
      ? `not approved: no operator approved request ${last.id} ${within}`
      : `not approved: request ${last.id} got ${approvalsSoFar(last)} ${within}, not enough`;
  return refusal('approval_timeout', message, { approval_id: last.id });
}

/** A later sign of the same payload waits on the request now: this one sends nothing, so it never sends twice. */
function supersededRefusal(current: ApprovalRecord): Refusal {
  return refusal(
    'approval_superseded',
    `not sent: the same payload was signed again and that later sign now waits on approval ${current.id} (${approvalsSoFar(current)} so far); its answer is the one that counts`,
    { approval_id: current.id },
  );
}

/** The caller is gone; `note` says how the request stands in the ledger when it is not marked abandoned. */
export function approvalAbandonedRefusal(id: string, note: string): Refusal {
  return refusal('approval_abandoned', `not approved: request ${id}: ${GONE}${note}`, { approval_id: id });
}
