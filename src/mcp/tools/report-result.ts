/** How a check or sign report becomes a tool result. */
import { isSuccessOutcome, type Report } from '../../signer/report';
import type { ToolResult } from './tool';

/** A report as a tool result: isError unless the outcome is a success. */
export function reportResult(report: Report, key: string | null): ToolResult {
  return {
    structured: report,
    outcome: report.outcome,
    failedCheck: report.failed_check,
    key: report.key ?? key,
    signature: report.signature,
    isError: !isSuccessOutcome(report.outcome),
    read: false,
  };
}
