/**
 * What one step of the check or sign flow leads to: carry on with what it produced, or stop with the report as
 * it stands (a refusal, a failed simulation). Steps return this instead of throwing, so every early end of a flow
 * is visible at the call that caused it.
 */
import type { Refusal } from '../refusals';
import type { Report } from '../report';

export type Stopped = { ok: false; report: Report };
/** A step with nothing to hand on. */
export type Step = { ok: true } | Stopped;
/** A step that hands its result on. */
export type StepWith<T extends object> = ({ ok: true } & T) | Stopped;

/** Marks the report refused by one check; the detail starts with the check's name. */
export function refuse(report: Report, r: Refusal): Report {
  report.outcome = 'refused';
  report.failed_check = r.check;
  report.reason = r.reason;
  report.figures = r.figures ?? null;
  report.detail = `${r.check}: ${r.message}`;
  return report;
}

export function stop(report: Report, r: Refusal): Stopped {
  return { ok: false, report: refuse(report, r) };
}

/** Whole seconds for messages; the short timings of tests keep one decimal. */
export const seconds = (ms: number): number => Number((ms / 1000).toFixed(1));
