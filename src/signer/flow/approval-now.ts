/**
 * A request as its sign may act on it at this moment. An approved one is judged again with whose votes count now
 * (the operators configured now, the revocations in the ledger): an operator revoked or removed between the vote
 * and this read no longer makes the quorum, and the request is pending again (ledger/records.ts recountDecision),
 * so the sign waits for another approval as it would for any vote missing.
 */
import type { ApprovalRecord, Ledger } from '../../ledger/types';
import { nowSeconds } from '../../util/time';

export async function approvalNow(
  ledger: Ledger,
  id: string,
  voters: readonly string[] | null,
): Promise<ApprovalRecord | null> {
  const record = await ledger.getApproval(id);
  return record?.status === 'approved' ? ledger.recountApproval(id, voters, nowSeconds()) : record;
}

/**
 * The request at the sign's deadline: expired unless it is approved (as approvalNow judges it). One that this
 * judging returns to pending is expired as well: no approval can reach this sign any more.
 */
export async function approvalAtDeadline(
  ledger: Ledger,
  id: string,
  voters: readonly string[] | null,
): Promise<ApprovalRecord | null> {
  const expire = () => ledger.decideApproval(id, 'expired', 'signer', nowSeconds()).catch(() => undefined);
  await expire();
  const record = await approvalNow(ledger, id, voters);
  if (record?.status !== 'pending') return record;
  await expire();
  return ledger.getApproval(id);
}
