/**
 * SEP-2243 value encoding, the client side (streamable-http.mdx §Value Encoding): how a body value becomes the
 * text of an `Mcp-Name` or `Mcp-Param-*` header. Plain when the text is safe visible ASCII, otherwise the
 * `=?base64?…?=` sentinel around the base64 of its UTF-8 bytes. Pure functions: the relay's only header logic.
 */
import { SENTINEL_PREFIX, SENTINEL_SUFFIX } from '../mcp/base64';

/** Can this text travel as a plain header value? Visible ASCII, space and HTAB inside, no whitespace at the ends. */
export function isPlainHeaderSafe(text: string): boolean {
  if (text.length === 0) return true; // an empty value is sent as an empty header
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x09 && (c < 0x20 || c > 0x7e)) return false;
  }
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  // HTTP trims surrounding whitespace, so a value that has some must be encoded to survive.
  if (first === 0x20 || first === 0x09 || last === 0x20 || last === 0x09) return false;
  // A plain value that looks like the sentinel would be decoded by the server: encode it so it stays literal.
  if (text.startsWith(SENTINEL_PREFIX) && text.endsWith(SENTINEL_SUFFIX)) return false;
  return true;
}

/** The header text for a string value: as is when safe, else `=?base64?…?=`. */
export function encodeHeaderText(text: string): string {
  if (isPlainHeaderSafe(text)) return text;
  return `${SENTINEL_PREFIX}${Buffer.from(text, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * The header text for an argument value, or null when no header is sent: null and absent values are omitted
 * (SEP-2243 "MUST omit the header"); integers are decimal, booleans lowercase, strings encoded as above.
 * Values no header can carry (objects, arrays, fractions) are also omitted: the service's header check then
 * names the argument, which says more than anything the relay could invent.
 */
export function headerValueFor(value: unknown): string | null {
  if (typeof value === 'string') return encodeHeaderText(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return null;
}
