/**
 * The HTTP `Retry-After` header (RFC 9110 §10.2.3): either a number of seconds or an HTTP date. Providers send it
 * with 429 and 503. Returns the wait in milliseconds from `now`, or undefined when the header is absent or not
 * one of the two forms (a header we cannot read is no instruction; the backoff applies instead).
 */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) {
    const seconds = Number(value);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
  // An HTTP date names its weekday and zone ("Wed, 21 Oct 2015 07:28:00 GMT"); a bare "3.5" is not one.
  if (!/[a-z]/i.test(value)) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
