/** A Pyth feed id names a price stream on Pythnet (the same on every cluster): 32 bytes, written in hex. */

/** A feed id as a config or a person may write it (`0x` prefix, any case) → 64 lowercase hex digits, or null. */
export function normalizeFeedId(v: string): string | null {
  const hex = v.trim().replace(/^0x/i, '').toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}
