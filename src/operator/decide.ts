/**
 * The one place a console decision reaches the ledger. It takes everything a vote names (the approval, the decision,
 * the operator, when, and the passkey credential that signed the decision's challenge), so a quorum's vote can take
 * its place without touching the routes.
 */
import type { ApprovalRecord, Ledger } from '../ledger/types';
import type { Decision } from './challenge';

export interface OperatorDecision {
  approvalId: string;
  decision: Decision;
  operator: string;
  ts: number;
  /** The passkey whose assertion carried the decision; null for a decision made without one. */
  credentialId: string | null;
}

export async function recordDecision(ledger: Ledger, d: OperatorDecision): Promise<ApprovalRecord> {
  return ledger.decideApproval(d.approvalId, d.decision, d.operator, d.ts);
}
