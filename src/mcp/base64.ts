/**
 * SEP-2243 header values: plain, or `=?base64?…?=` around canonical base64 (util/base64.ts: the standard alphabet,
 * `=` padding, zero pad bits) whose bytes are valid UTF-8.
 */
import { decodeCanonicalBase64 } from '../util/base64';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The decoded UTF-8 text, or null when the text is not canonical base64 of valid UTF-8. */
export function decodeStrictBase64(text: string): string | null {
  const decoded = decodeCanonicalBase64(text);
  if (!('bytes' in decoded)) return null;
  try {
    return utf8.decode(decoded.bytes);
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
