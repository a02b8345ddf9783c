/**
 * Delivery state as an operator sees it, for `sa-forge-signer notify list` and the operator console alike: one row
 * per notification and hook, newest first, without the body (the event's figures are in the audit log and the
 * approvals; the hook's receiver has the body itself).
 */
import type { Ledger, NotificationRecord, NotificationStatus } from '../ledger/types';

export interface NotificationView {
  id: string;
  event: string;
  key: string | null;
  /** The hook's id: host and a hash of its URL. */
  hook: string;
  status: NotificationStatus;
  attempts: number;
  created_at: string;
  /** A pending notification's next attempt; null once delivered or failed. */
  next_attempt_at: string | null;
  /** When it was delivered or given up on. */
  settled_at: string | null;
  last_error: string | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function notificationView(n: NotificationRecord): NotificationView {
  return {
    id: n.id,
    event: n.event,
    key: n.key,
    hook: n.hook,
    status: n.status,
    attempts: n.attempts,
    created_at: iso(n.created_at),
    next_attempt_at: n.status === 'pending' ? iso(n.next_at) : null,
    settled_at: n.settled_at === null ? null : iso(n.settled_at),
    last_error: n.last_error,
  };
}

/** The newest `limit` notifications (of one status, or all) and how many stand in each status. */
export async function deliveryState(
  ledger: Pick<Ledger, 'listNotifications' | 'notificationCounts'>,
  opts: { limit: number; status?: NotificationStatus },
): Promise<{ counts: Record<NotificationStatus, number>; notifications: NotificationView[] }> {
  const [rows, counts] = await Promise.all([ledger.listNotifications(opts), ledger.notificationCounts()]);
  return { counts, notifications: rows.map(notificationView) };
}
