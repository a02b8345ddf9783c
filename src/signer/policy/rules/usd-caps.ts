/**
 * A key's dollar caps (`usd.per_tx`, `usd.per_day`, `usd.approve_above`; docs/pricing.md) on what a transaction
 * takes out of it, valued by the flow with checked prices (src/pricing/usd-spend.ts). The daily cap counts what
 * the ledger recorded of the key's signs of the last 24 h, each at its own sign's valuation (usage `usdMicros`), so
 * a later price move never frees or consumes cap. A key without `usd` caps is not judged here at all.
 */
import type { KeyConfig } from '../../../config/types';
import { describeValued, type UsdSpend } from '../../../pricing/usd-spend';
import { formatUsd, type UsdMicros } from '../../../util/usd-amounts';
import { refusal, type Refusal } from '../../refusals';

/**
 * The caps in their order: the spend could be valued at all (a price refused, or none read), the per-transaction
 * cap, then (when `spentToday` is given: the usage is known) the daily cap with this transaction.
 */
export function usdCapRefusal(key: KeyConfig, spend: UsdSpend | null, spentToday: UsdMicros | null): Refusal | null {
  const caps = key.usd ?? null;
  if (caps === null) return null;
  if (spend === null)
    return refusal(
      'price_unavailable',
      `key "${key.name}" has dollar caps but no prices were read with this transaction's simulation, so its spend cannot be valued`,
      {},
    );
  if (!spend.ok) return spend.refusal;
  return capsRefusal(key, spend.usd, describeValued(spend.valued), spentToday);
}

/**
 * A sign the ledger recorded, judged again (policy replay) at the dollar value its intent recorded when it was
 * signed, never re-priced; null `usd`: the sign recorded none (its key had no dollar caps then), so the dollar caps
 * cannot judge it and the replay says so.
 */
export function recordedUsdRefusal(key: KeyConfig, usd: UsdMicros | null, spentToday: UsdMicros): Refusal | null {
  if ((key.usd ?? null) === null || usd === null) return null;
  return capsRefusal(key, usd, 'as recorded when it was signed', spentToday);
}

/** The per-transaction cap, then (when the usage is known) the daily cap with this transaction's `usd`. */
function capsRefusal(key: KeyConfig, usd: UsdMicros, valued: string, spentToday: UsdMicros | null): Refusal | null {
  const caps = key.usd ?? null;
  if (caps === null) return null;
  if (caps.per_tx !== null && usd > caps.per_tx)
    return refusal(
      'usd_per_tx_cap',
      `per-transaction dollar cap: this transaction takes $${formatUsd(usd)} out of the key (${valued}), more than $${formatUsd(caps.per_tx)}`,
      { usd_requested: formatUsd(usd), usd_cap: formatUsd(caps.per_tx) },
    );
  if (caps.per_day !== null && spentToday !== null && spentToday + usd > caps.per_day)
    return refusal(
      'usd_per_day_cap',
      `daily dollar cap: $${formatUsd(spentToday)} spent or reserved in 24 h, plus $${formatUsd(usd)} for this transaction (${valued}), exceeds $${formatUsd(caps.per_day)}`,
      { usd_spent: formatUsd(spentToday), usd_requested: formatUsd(usd), usd_cap: formatUsd(caps.per_day) },
    );
  return null;
}

/**
 * With approval `confirm` and `usd.approve_above` set, the dollar threshold decides whether an operator approves
 * (above it: yes; at it: no); null when it does not apply, so the base-unit thresholds decide.
 */
export function usdNeedsApproval(key: KeyConfig, spend: UsdSpend | null): boolean | null {
  const threshold = key.usd?.approve_above ?? null;
  if (key.approval !== 'confirm' || threshold === null || spend === null || !spend.ok) return null;
  return spend.usd > threshold;
}

/** What is left of `usd.per_day` once this transaction counts (never below 0); null without a daily dollar cap. */
export function remainingDailyUsd(key: KeyConfig, spentToday: UsdMicros, spend: UsdSpend | null): UsdMicros | null {
  const cap = key.usd?.per_day ?? null;
  if (cap === null) return null;
  const left = cap - spentToday - (spend?.ok === true ? spend.usd : 0n);
  return left > 0n ? left : 0n;
}
