/** The agent's own text of a payload, `summary` and `warnings`: untrusted, and bounded in count and length. */
import { invalid, shapeError } from './payload-errors';
import { PAYLOAD_LIMITS } from './payload-limits';

export function parseSummary(raw: unknown): string {
  const summary = raw ?? '';
  if (typeof summary !== 'string') throw shapeError('summary must be a string');
  if (summary.length > PAYLOAD_LIMITS.summaryChars)
    throw invalid(`summary has ${summary.length} characters; at most ${PAYLOAD_LIMITS.summaryChars}`);
  return summary;
}

export function parseWarnings(raw: unknown): string[] {
  const warnings = raw ?? [];
  if (!Array.isArray(warnings)) throw shapeError('warnings must be an array of strings');
  if (warnings.length > PAYLOAD_LIMITS.warnings)
    throw invalid(`warnings has ${warnings.length} entries; at most ${PAYLOAD_LIMITS.warnings}`);
  return warnings.map((w: unknown, i) => {
    if (typeof w !== 'string') throw shapeError('warnings must be an array of strings');
    if (w.length > PAYLOAD_LIMITS.warningChars)
      throw invalid(`warnings[${i}] has ${w.length} characters; at most ${PAYLOAD_LIMITS.warningChars}`);
    return w;
  });
}
