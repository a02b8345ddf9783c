/**
 * What the console page shows, read fresh for each page: the pending approvals, each key's caps and what is spent
 * and left (the engine's own key view), the halts, the audit tail and the webhooks' delivery state (the same view
 * as `sa-forge-signer notify list`); and `audit verify`'s verdict, which is kept for a while (audit-verdict.ts).
 */
import type { AuditEntry, ApprovalRecord, HaltRecord, Ledger } from '../ledger/types';
import type { AuditVerdict, AuditVerdicts } from './audit-verdict';
import { deliveryState } from '../notify/view';
import type { Refusal } from '../signer/refusals';
import type { KeyView } from '../signer/types';
import type { TreasuryStatus } from '../treasury/status';
import { errorMessage } from '../util/errors';

export const AUDIT_TAIL = 20;
export const NOTIFICATIONS_SHOWN = 10;

export interface ConsoleData {
  /** Unix seconds. */
  now: number;
  /** Each with what the policy in force now would refuse of it (null: nothing, or the engine is not open yet). */
  approvals: (ApprovalRecord & { policy_now: Refusal | null })[];
  /** null while the signer engine is still opening or when it failed; keysError says why. */
  keys: KeyView[] | null;
  keysError: string | null;
  /** Each treasury key's allowances on chain and its plan (null when the chain could not be read; why in the error). */
  treasuries: TreasuryStatus[] | null;
  treasuriesError: string | null;
  halts: HaltRecord[];
  audit: AuditEntry[];
  verdict: AuditVerdict;
  deliveries: Awaited<ReturnType<typeof deliveryState>>;
}

/** The approvals still waiting for an operator at `now` (unix seconds): pending and not yet expired. */
export async function pendingApprovals(ledger: Ledger, now: number): Promise<ApprovalRecord[]> {
  return (await ledger.listApprovals({ status: 'pending' })).filter((a) => a.expires_at >= now);
}

/** What the page reads through the engine: the keys as it shows them, and its judgement of pending approvals. */
export interface EngineViews {
  keys: () => Promise<KeyView[]>;
  policyNow: (approval: ApprovalRecord) => Promise<Refusal | null>;
  /** The treasury keys as the chain holds them, with their plans; absent: the page shows none. */
  treasuries?: () => Promise<TreasuryStatus[]>;
}

export async function readConsoleData(
  ledger: Ledger,
  engine: EngineViews,
  verdicts: AuditVerdicts,
  now: number,
): Promise<ConsoleData> {
  const { keys } = engine;
  // An engine still opening judges nothing yet: the card then shows no warning, and the sign is judged anyway.
  const judged = async (a: ApprovalRecord) => ({ ...a, policy_now: await engine.policyNow(a).catch(() => null) });
  const [approvals, halts, audit, verdict, keyViews, deliveries, treasuries] = await Promise.all([
    pendingApprovals(ledger, now).then((pending) => Promise.all(pending.map(judged))),
    ledger.listHalts(),
    ledger.tail(AUDIT_TAIL),
    verdicts.current(ledger, now),
    keys().then(
      (views) => ({ views, error: null }),
      (e: unknown) => ({ views: null, error: errorMessage(e) }),
    ),
    deliveryState(ledger, { limit: NOTIFICATIONS_SHOWN }),
    // A chain that does not answer leaves the rest of the page as it is.
    (engine.treasuries?.() ?? Promise.resolve([])).then(
      (views) => ({ views, error: null }),
      (e: unknown) => ({ views: null, error: errorMessage(e) }),
    ),
  ]);
  return {
    now,
    approvals,
    keys: keyViews.views,
    keysError: keyViews.error,
    treasuries: treasuries.views,
    treasuriesError: treasuries.error,
    halts,
    audit: audit.reverse(),
    verdict,
    deliveries,
  };
}
