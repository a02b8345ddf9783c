/**
 * Dollar amounts, exact: the signer counts in micro-dollars (millionths of a dollar) as bigint, so a price with
 * eight decimals times a lamport amount rounds once, at the end, and never through a float. Operators write dollars
 * with cents as a decimal string ("250.00"); a bare number is refused because `5` could mean dollars or cents.
 */

/** Micro-dollars: 1 USD = 1_000_000n. */
export type UsdMicros = bigint;
export const MICROS_PER_USD = 1_000_000n;

/** Whole dollars with at most two decimals (cents), no sign, no exponent, no separators. */
const DOLLARS = /^(0|[1-9]\d{0,12})(?:\.(\d{1,2}))?$/;

export type UsdParse = { ok: true; micros: UsdMicros } | { ok: false; message: string };

/**
 * `"250.00"` → 250_000_000n micro-dollars. At most 13 digits of dollars (ten trillion: far above any cap) so the
 * sum of a day's spends stays well inside what the ledger stores.
 */
export function parseUsd(v: unknown): UsdParse {
  if (typeof v === 'number')
    return {
      ok: false,
      message: `write dollars as a string with cents, like "${Number.isFinite(v) ? v.toFixed(2) : '5.00'}": a number is refused because it could mean dollars or cents`,
    };
  if (typeof v !== 'string') return { ok: false, message: 'write dollars as a string with cents, like "5.00"' };
  const m = DOLLARS.exec(v.trim());
  if (m === null)
    return {
      ok: false,
      message: `${JSON.stringify(v.slice(0, 40))} is not a dollar amount: write whole dollars with at most two decimals, like "250" or "4.99" (no "$", sign or separators)`,
    };
  const [, dollars = '0', cents = ''] = m;
  return { ok: true, micros: (BigInt(dollars) * 100n + BigInt(cents.padEnd(2, '0'))) * 10_000n };
}

/**
 * `4_000_000n` → `"4.00"`; amounts finer than a cent keep their digits (`"4.000001"`), so a figure shown is the
 * figure counted. Negative amounts keep their sign.
 */
export function formatUsd(micros: UsdMicros): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_USD;
  let fraction = (abs % MICROS_PER_USD).toString().padStart(6, '0').replace(/0+$/, '');
  if (fraction.length < 2) fraction = fraction.padEnd(2, '0');
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}
