/** The report as a verdict of the policy core (policy/verdict.ts) makes it: the one place a verdict is written. */
import type { Refusal } from '../refusals';
import type { Report } from '../report';
import type { Verdict } from '../policy/verdict';
import { refuse, type Step } from './step';
import { formatUsd } from '../../util/usd-amounts';

/**
 * Writes a verdict on the report: its passed checks (each once: a sign is judged again after an approval), its
 * figures, and its refusal. Returns the refusal, or null when allowed.
 */
export function reportVerdict(report: Report, verdict: Verdict): Refusal | null {
  for (const check of verdict.passed) if (!report.checks.includes(check)) report.checks.push(check);
  const f = verdict.figures;
  if (f.needsApproval !== undefined) report.would_need_approval = f.needsApproval;
  if (f.remainingDailyLamports !== undefined) report.remaining_daily_lamports = f.remainingDailyLamports;
  if (f.usdValue !== undefined) report.usd_value = formatUsd(f.usdValue);
  if (f.remainingDailyUsd !== undefined) report.remaining_daily_usd = formatUsd(f.remainingDailyUsd);
  if (f.remainingDailyTokens !== undefined) report.remaining_daily_tokens = f.remainingDailyTokens;
  if (verdict.outcome === 'allowed') return null;
  refuse(report, verdict.refusal);
  return verdict.refusal;
}

/** A verdict as a step of a flow: it goes on when allowed, and stops with the report written when refused. */
export function verdictStep(report: Report, verdict: Verdict): Step {
  return reportVerdict(report, verdict) ? { ok: false, report } : { ok: true };
}
