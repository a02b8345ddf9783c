/** A plain JSON object (not an array, not null): what every parsed body or argument is narrowed to first. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
