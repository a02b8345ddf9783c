/**
 * The one place a console decision reaches the ledger: the operator's vote, with the passkey credential that signed
 * the decision's challenge (the ledger keeps it with the vote). The ledger counts it towards the key's quorum; a vote
 * that decides the request tells the hooks at once (the sign that waited tells them too: the outbox keeps one).
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
  /** The operators configured now, whose votes may count (ledger/records.ts votersOf). */
  voters: readonly string[] | null;
}

export async function recordDecision(
  ledger: Ledger,
  d: OperatorDecision,
  tell: (decided: ApprovalRecord) => Promise<void>,
): Promise<ApprovalRecord> {
  const record = await ledger.decideApproval(d.approvalId, d.decision, d.operator, d.ts, d.credentialId, d.voters);
  if (record.status === d.decision) await tell(record);
  return record;
}
