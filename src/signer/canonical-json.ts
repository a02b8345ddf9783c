/**
 * Canonical JSON: keys sorted at every level, no whitespace, numbers and strings as JSON.stringify writes them.
 * The payload hash must not depend on how a client ordered its keys or spaced its JSON (docs/policy.md describes
 * the payload hash).
 */
/** JSON.stringify as it behaves: undefined for undefined, functions and symbols. */
const stringify: (value: unknown) => string | undefined = JSON.stringify;

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    return stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(obj).sort()) {
    if (obj[k] === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
  }
  return `{${parts.join(',')}}`;
}
