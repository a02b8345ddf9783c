/**
 * The rule every report keeps, checked on each one a test world's engine returns: a refusal carries a reason of
 * its own check (src/signer/refusals.ts), a failed simulation the reason `simulation_failed`, anything else none.
 */
import { REASONS } from '../../src/signer/refusals';
import type { Report } from '../../src/signer/report';

export function reasonAgrees(r: Report): string | null {
  if (r.outcome === 'refused') {
    if (r.reason === null) return `refused (${r.failed_check ?? '?'}) without a reason: ${r.detail ?? ''}`;
    if (REASONS[r.reason].check !== r.failed_check)
      return `reason ${r.reason} belongs to ${String(REASONS[r.reason].check)}, not ${String(r.failed_check)}`;
    return null;
  }
  if (r.outcome === 'simulation_failed')
    return r.reason === 'simulation_failed' ? null : `simulation_failed with ${r.reason}`;
  if (r.reason !== null || r.figures !== null) return `outcome ${r.outcome} with reason ${String(r.reason)}`;
  return null;
}
