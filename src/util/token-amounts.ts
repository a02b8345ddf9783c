/**
 * Token amounts are whole base units (u64, so bigint); people read them in UI units, the base amount shifted by the
 * mint's decimals. Reports and the ledger carry base units as decimal strings (JSON has no 64-bit integers).
 */

/** `1234567` with 6 decimals → `"1.234567"`; trailing zeros dropped, a negative amount keeps its sign. */
export function uiAmount(base: bigint, decimals: number): string {
  const negative = base < 0n;
  const digits = (negative ? -base : base).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** `"1000000 (1 UI)"`: what messages show, base units first so nothing is rounded away. */
export function showAmount(base: bigint, decimals: number | null): string {
  return decimals === null ? `${base}` : `${base} (${uiAmount(base, decimals)} UI)`;
}

const BASE_UNITS = /^(0|[1-9]\d{0,19})$/;
export const U64_MAX = (1n << 64n) - 1n;

/** A base-unit amount from config or the ledger: a whole number 0…u64 max, as a JS integer or a decimal string. */
export function parseBaseUnits(v: unknown): bigint | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : null;
  if (typeof v === 'bigint') return v >= 0n && v <= U64_MAX ? v : null;
  if (typeof v !== 'string' || !BASE_UNITS.test(v.trim())) return null;
  const n = BigInt(v.trim());
  return n <= U64_MAX ? n : null;
}
