/**
 * The `treasury.refill_due` notification (docs/treasury.md, docs/notifications.md): a treasury account's allowance
 * is below `refill_below_percent` of the plan for the next period, so the owner should sign the plan again. Told
 * once per account per UTC day: the event is `once` for that day, so the outbox keeps one row per hook however many
 * passes, restarts or replicas see it.
 */
import type { NotificationEvent } from '../notify/events';
import type { TreasuryAccountStatus } from './status';

/** The UTC day of `ts` (unix seconds), `2026-12-06`: the period a refill notice is told once in. */
export const refillPeriod = (ts: number): string => new Date(ts * 1000).toISOString().slice(0, 10);

export function treasuryRefillDue(
  key: string,
  a: TreasuryAccountStatus & { chain: NonNullable<TreasuryAccountStatus['chain']> },
  ts: number,
): NotificationEvent | null {
  if (a.plan === null || a.refillBelow === null) return null;
  const period = refillPeriod(ts);
  return {
    type: 'treasury.refill_due',
    timestamp: new Date(ts * 1000).toISOString(),
    data: {
      key,
      account: a.account,
      mint: a.chain.mint,
      decimals: a.chain.decimals,
      delegate: a.chain.delegate,
      chain_allowance: a.chain.delegatedAmount.toString(),
      refill_below: a.refillBelow.toString(),
      planned_allowance: a.plan.amount.toString(),
      planned_by: a.plan.basis,
      period,
    },
    once: `treasury.refill_due:${key}:${a.account}:${period}`,
  };
}
