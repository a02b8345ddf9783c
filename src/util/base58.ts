/**
 * Bitcoin-alphabet base58, as Solana uses for addresses, signatures and blockhashes. Ours rather than kit's codec,
 * which gives the same results: a `check` reads and writes dozens of addresses, and kit's is several times slower
 * per address (docs/decisions.md, "Base58").
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const digits: number[] = []; // base-58 digits of the number after the leading zeros, least significant first
  for (const byte of bytes.subarray(zeros)) {
    let carry = byte;
    // Index loops, not entries(): this runs for every address and signature, and an iterator is much slower here.
    for (let j = 0; j < digits.length; j++) {
      carry += (digits[j] ?? 0) << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  return (
    '1'.repeat(zeros) +
    digits
      .reverse()
      .map((digit) => ALPHABET.charAt(digit))
      .join('')
  );
}

/** Returns null for a string with a character outside the alphabet. */
export function decodeBase58(text: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const bytes: number[] = []; // bytes of the number after the leading '1's, least significant first
  for (let i = zeros; i < text.length; i++) {
    // Past the table (a code of 128 or more) is outside the alphabet too.
    const value = INDEX[text.charCodeAt(i)] ?? -1;
    if (value < 0) return null;
    let carry = value;
    for (let j = 0; j < bytes.length; j++) {
      carry += (bytes[j] ?? 0) * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  const out = new Uint8Array(zeros + bytes.length);
  out.set(bytes.reverse(), zeros);
  return out;
}

/** A 32-byte public key in base58, or null. */
export function decodeAddress(text: string): Uint8Array | null {
  if (text.length < 32 || text.length > 44) return null;
  const bytes = decodeBase58(text);
  return bytes && bytes.length === 32 ? bytes : null;
}
