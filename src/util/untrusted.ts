/**
 * Text an agent wrote (summaries, warnings, halt reasons, memos, message text) is shown to an operator only
 * through `showUntrusted`. A terminal obeys escape sequences and a reader trusts line breaks, so every
 * character that could move the cursor, recolour the screen, start a new line, reorder what is displayed or
 * hide itself is printed as a visible escape instead, and the length is bounded so one string cannot fill
 * the screen.
 */

/** The longest untrusted string shown in full; longer ones are cut and say how much was left out. */
export const UNTRUSTED_SHOW_MAX = 512;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

/**
 * C0 and C1 controls and DEL; bidi embeddings, overrides and isolates; zero-width and invisible formatting
 * characters; line and paragraph separators; lone surrogates. Backslash too, so an escape shown here can
 * never be confused with one the agent typed.
 */
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- matching control characters is this module's job
  /[\\\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeChar(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** The same text with every unsafe character shown as an escape (`\x1b`, `\n`, `\u202e`). */
export function escapeUntrusted(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/** Escaped and bounded: what an operator's screen, a log line or a report shows of an agent's text. */
export function showUntrusted(text: string, max = UNTRUSTED_SHOW_MAX): string {
  const chars = Array.from(text);
  if (chars.length <= max) return escapeUntrusted(text);
  return `${escapeUntrusted(chars.slice(0, max).join(''))}… (${chars.length - max} more characters)`;
}

/**
 * Characters JSON.stringify leaves raw that a terminal would still act on (DEL, C1 controls such as the 8-bit CSI,
 * bidi and zero-width formatting, line separators). JSON.stringify already escapes C0 controls.
 */
const JSON_UNSAFE = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

/**
 * JSON text fit for a terminal: the same value as JSON.stringify gives (a parser reads it back identically), with
 * every character a terminal could act on written as a `\uXXXX` escape.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    JSON_UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
