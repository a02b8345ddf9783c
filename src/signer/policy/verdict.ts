/**
 * What the policy decides (decide.ts): allowed or refused with one coded refusal (refusals.ts), the checks that
 * passed on the way, and the figures the report shows. The report is written from a verdict in one place
 * (flow/verdict-report.ts); the rules never touch it.
 */
import type { Refusal } from '../refusals';
import type { UsdMicros } from '../../util/usd-amounts';
import type { PassName } from '../vocabulary';

/** The figures a verdict worked out; a field is absent when this point of the flow does not work it out. */
export interface VerdictFigures {
  /** What the cap holds for the transaction: what the simulation says the key loses, fee included. */
  reservation?: number;
  /** The daily allowance left after this transaction, the smallest under every policy judged. */
  remainingDailyLamports?: number;
  /** Each of the key's mints' daily allowance left after this transaction. */
  remainingDailyTokens?: { mint: string; remaining: string }[];
  /** What the transaction takes out of the key in dollars (a key with `usd` caps, once its spend is valued). */
  usdValue?: UsdMicros;
  /** What is left of the key's `usd.per_day` after this transaction, the smallest under every policy judged. */
  remainingDailyUsd?: UsdMicros;
  /** Whether an operator must approve it (approval `confirm`). */
  needsApproval?: boolean;
}

export type Verdict =
  | { outcome: 'allowed'; passed: PassName[]; figures: VerdictFigures }
  | { outcome: 'refused'; refusal: Refusal; passed: PassName[]; figures: VerdictFigures };

export const allowed = (passed: PassName[], figures: VerdictFigures = {}): Verdict => ({
  outcome: 'allowed',
  passed,
  figures,
});

export const refused = (refusal: Refusal, passed: PassName[] = [], figures: VerdictFigures = {}): Verdict => ({
  outcome: 'refused',
  refusal,
  passed,
  figures,
});
