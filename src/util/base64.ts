/**
 * Canonical RFC 4648 base64: the standard alphabet, "=" padding to a multiple of 4, and zero padding bits. Every
 * base64 the signer reads from outside (transactions, messages, partial signers, account data) is held to it: a
 * decoder that forgives would let two texts name the same bytes.
 */

/** The form of canonical base64 (the padding bits are checked by decoding: decodeCanonicalBase64). */
export const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Characters of the padded base64 of `bytes` bytes: a bound to refuse a text by before decoding it. */
export const base64Chars = (bytes: number): number => Math.ceil(bytes / 3) * 4;

/** Why a text is not canonical base64: a character outside the alphabet (at its index), the form, or the padding bits. */
export type Base64Problem = { kind: 'character'; at: number } | { kind: 'form' } | { kind: 'padding bits' };

/** The bytes of a canonical base64 text, or what is wrong with it. Bound the text's length before calling. */
export function decodeCanonicalBase64(text: string): { bytes: Uint8Array } | { problem: Base64Problem } {
  if (text.length % 4 !== 0 || !STRICT_BASE64.test(text)) {
    const at = text.search(/[^A-Za-z0-9+/=]/);
    return { problem: at >= 0 ? { kind: 'character', at } : { kind: 'form' } };
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) return { problem: { kind: 'padding bits' } };
  return { bytes: new Uint8Array(bytes) };
}
