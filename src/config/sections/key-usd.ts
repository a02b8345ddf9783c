/**
 * A key's `usd:` caps, in dollars (docs/pricing.md): written as decimal strings with at most two decimals ("5.00");
 * a bare number is refused, since `5` could mean dollars or cents. The loader turns them into micro-dollars.
 */
import type { UsdMicros } from '../../util/usd-amounts';
import { parseUsd } from '../../util/usd-amounts';
import { section, type Infer } from '../setting';

/** The `usd` group of a key's schema. */
export const keyUsdSchema = section({
  per_tx: {
    doc: 'Most dollars one transaction may take out of the key (SOL and every priced mint it lowers, at price + confidence), a string like "5.00"; null: no such cap (refusal `usd_per_tx_cap`).',
    format: 'usd-or-null',
    default: null,
    nullable: true,
  },
  per_day: {
    doc: 'Most dollars the key may spend or reserve in 24 h, counted from the value each sign recorded when signed, a string like "50.00"; null: no dollar cap (the base-unit caps still hold; refusal `usd_per_day_cap`).',
    format: 'usd-or-null',
    default: null,
    nullable: true,
  },
  approve_above: {
    doc: 'With approval `confirm`: a transaction worth at most this many dollars signs without an operator, above it an operator approves; null: the base-unit thresholds decide.',
    format: 'usd-or-null',
    default: null,
    nullable: true,
  },
});

type Raw = Infer<typeof keyUsdSchema>;

/** A key's dollar caps in micro-dollars; null: no such cap. */
export interface KeyUsdCaps {
  per_tx: UsdMicros | null;
  per_day: UsdMicros | null;
  approve_above: UsdMicros | null;
}

const micros = (v: string | null): UsdMicros | null => {
  if (v === null) return null;
  const r = parseUsd(v);
  // The schema's format has already refused anything else.
  return r.ok ? r.micros : null;
};

/** The caps in micro-dollars, or null when the key sets none. */
export function buildKeyUsd(raw: Raw): KeyUsdCaps | null {
  const caps = { per_tx: micros(raw.per_tx), per_day: micros(raw.per_day), approve_above: micros(raw.approve_above) };
  return caps.per_tx === null && caps.per_day === null && caps.approve_above === null ? null : caps;
}
