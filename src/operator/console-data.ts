/**
 * What the console page shows, read fresh for each page: the pending approvals, each key's caps and what is spent
 * and left (the engine's own key view), the halts, the audit tail and `audit verify`'s verdict, and the webhooks'
 * delivery state (the same view as `sa-forge-signer notify list`).
 */
import type { AuditEntry, ApprovalRecord, HaltRecord, Ledger, VerifyResult } from '../ledger/types';
import { deliveryState } from '../notify/view';
import type { KeyView } from '../signer/types';
import { errorMessage } from '../util/errors';

export const AUDIT_TAIL = 20;
export const NOTIFICATIONS_SHOWN = 10;

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
  deliveries: Awaited<ReturnType<typeof deliveryState>>;
}

export async function readConsoleData(
  ledger: Ledger,
  keys: () => Promise<KeyView[]>,
  now: number,
): Promise<ConsoleData> {
  const [approvals, halts, audit, verdict, keyViews, deliveries] = await Promise.all([
    ledger.listApprovals({ status: 'pending' }),
    ledger.listHalts(),
    ledger.tail(AUDIT_TAIL),
    ledger.verify(),
    keys().then(
      (views) => ({ views, error: null }),
      (e: unknown) => ({ views: null, error: errorMessage(e) }),
    ),
    deliveryState(ledger, { limit: NOTIFICATIONS_SHOWN }),
  ]);
  return {
    now,
    approvals: approvals.filter((a) => a.expires_at >= now),
    keys: keyViews.views,
    keysError: keyViews.error,
    halts,
    audit: audit.reverse(),
    verdict,
    deliveries,
  };
}
