/**
 * The judgement after a simulation, one for every place a transaction is simulated: `check`, `sign`, and `sign`
 * again after an operator's approval. It puts the simulation's figures on the report, applies the token policy,
 * the destination lists and a credential's spend checks to what the simulation says moves, says whether an operator must approve, and looks at the
 * cap against the usage read before the simulation. That look is a preview: the binding cap decision is the
 * gate's (gate.ts), under the key's lock, on the usage of the moment of sending.
 */
import type { KeyConfig } from '../../config/types';
import { spendOf } from '../../ledger/usage-book';
import type { Usage } from '../../ledger/types';
import { refusal } from '../refusals';
import type { PassName, Report } from '../report';
import { decimalsFrom, remainingTokens, tokenCapRefusal, tokensNeedApproval } from '../spl-tokens/policy';
import { credentialSpendRefusal } from '../rules/credential-spend';
import { destinationRefusal } from '../rules/destinations';
import type { CredentialSpendCheck } from '../types';
import { limitsRefusal, remainingDaily } from '../rules/limits';
import { recordSimulation, type Figures } from './simulate';
import { stop, type Step, type StepWith } from './step';
import { judgeTokens, type TokenFigures } from './tokens';

export function judgeSimulation(
  key: KeyConfig,
  report: Report,
  figures: Figures,
  opts: {
    /** The usage to preview the cap against; null: no preview (unknown, or stale after an approval's wait). */
    usage: Usage | null;
    /** Where this simulation stands in the flow, for a failed simulation's detail (`after approval`). */
    after?: string;
    /** The spend checks of the credential the agent presented, if any. */
    credential?: CredentialSpendCheck;
  },
): Step {
  const simulated = recordSimulation(report, figures, opts.after ?? null);
  if (!simulated.ok) return simulated;
  passed(report, 'simulation');
  // The token figures go on the report whatever refuses: an agent sees what the transaction would move.
  const tokens = judgeTokens(key, report, figures);
  const destinations = destinationRefusal(key, figures.gains) ?? tokens;
  if (destinations) return stop(report, destinations);
  passed(report, 'destinations');
  const narrowed = credentialSpendRefusal(opts.credential, key, report.balance_change, figures.gains);
  if (narrowed) return stop(report, narrowed);
  report.would_need_approval = needsApproval(key, report.balance_change, figures);
  if (opts.usage === null) return { ok: true };
  const cap = capReservation(key, report, opts.usage, figures);
  return cap.ok ? { ok: true } : cap;
}

function passed(report: Report, check: PassName): void {
  if (!report.checks.includes(check)) report.checks.push(check);
}

/**
 * What the cap holds for a transaction: exactly what the simulation says the key loses, in lamports and of each
 * mint. The simulated balance change already has the fee taken off, so the fee is not added again.
 */
export function capReservation(
  key: KeyConfig,
  report: Report,
  usage: Usage,
  figures: TokenFigures,
): StepWith<{ reservation: number }> {
  if (report.balance_change === null) {
    return stop(
      report,
      refusal('spend_unknown', "the simulation did not report this key's balance, so the spend cannot be bounded"),
    );
  }
  const reservation = spendOf(report.balance_change);
  report.remaining_daily_lamports = remainingDaily(key, usage, reservation);
  if ((key.tokens ?? []).length > 0) report.remaining_daily_tokens = remainingTokens(key, figures.tokens, usage.tokens);
  const refused =
    limitsRefusal(key, usage, reservation) ??
    tokenCapRefusal(key, figures.tokens, decimalsFrom(figures.mints), usage.tokens);
  if (refused) return stop(report, refused);
  return { ok: true, reservation };
}

/**
 * With approval `confirm`, whether this spend needs an operator: all of them, or those above a threshold (the
 * lamport one, or a spent mint's).
 */
export function needsApproval(key: KeyConfig, balanceChange: number | null, figures: TokenFigures): boolean {
  if (key.approval !== 'confirm') return false;
  const threshold = key.approve_above_lamports ?? null;
  const lamports = threshold === null || balanceChange === null || spendOf(balanceChange) > threshold;
  return lamports || tokensNeedApproval(key, figures.tokens);
}
