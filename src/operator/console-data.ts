/**
 * What the console page shows, read fresh for each page: the pending approvals, each key's caps and what is spent
 * and left (the engine's own key view), the halts, the audit tail and `audit verify`'s verdict.
 */
import type { AuditEntry, ApprovalRecord, HaltRecord, Ledger, VerifyResult } from '../ledger/types';
import type { KeyView } from '../signer/types';
import { errorMessage } from '../util/errors';

export const AUDIT_TAIL = 20;

export interface ConsoleData {
  /** Unix seconds. */
  now: number;
  approvals: ApprovalRecord[];
  /** null while the signer engine is still opening or when it failed; keysError says why. */
  keys: KeyView[] | null;
  keysError: string | null;
  halts: HaltRecord[];
  audit: AuditEntry[];
  verdict: VerifyResult;
}

export async function readConsoleData(
  ledger: Ledger,
  keys: () => Promise<KeyView[]>,
  now: number,
): Promise<ConsoleData> {
  const [approvals, halts, audit, verdict, keyViews] = await Promise.all([
    ledger.listApprovals({ status: 'pending' }),
    ledger.listHalts(),
    ledger.tail(AUDIT_TAIL),
    ledger.verify(),
    keys().then(
      (views) => ({ views, error: null }),
      (e: unknown) => ({ views: null, error: errorMessage(e) }),
    ),
  ]);
  return {
    now,
    approvals: approvals.filter((a) => a.expires_at >= now),
    keys: keyViews.views,
    keysError: keyViews.error,
    halts,
    audit: audit.reverse(),
    verdict,
  };
}
