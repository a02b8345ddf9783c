/**
 * Strict base64 for SEP-2243 `=?base64?…?=` values. Node's decoder accepts missing padding, foreign characters and
 * non-zero pad bits; this accepts only canonical RFC 4648 §4 text (the standard alphabet, `=` padding to a multiple
 * of 4) whose bytes are valid UTF-8.
 */
const STRICT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The decoded UTF-8 text, or null when the text is not canonical base64 of valid UTF-8. */
export function decodeStrictBase64(text: string): string | null {
  if (text.length % 4 !== 0 || !STRICT.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  // Canonical form only: re-encoding must give the same text (rejects non-zero bits in the last symbol).
  if (bytes.toString('base64') !== text) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

export const SENTINEL_PREFIX = '=?base64?';
export const SENTINEL_SUFFIX = '?=';

/** A header value as sent: plain, or the base64 sentinel form (prefix and suffix case-sensitive, exactly). */
export function decodeHeaderValue(value: string): { ok: true; value: string } | { ok: false } {
  if (
    value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length &&
    value.startsWith(SENTINEL_PREFIX) &&
    value.endsWith(SENTINEL_SUFFIX)
  ) {
    const decoded = decodeStrictBase64(value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length));
    return decoded === null ? { ok: false } : { ok: true, value: decoded };
  }
  return { ok: true, value };
}

/** Characters a header value may carry (RFC 9110 field-value as the spec restricts it): HTAB and 0x20–0x7E. */
export function hasOnlyHeaderSafeChars(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 0x09 && (c < 0x20 || c > 0x7e)) return false;
  }
  return true;
}
