/**
 * HTML built from templates whose every interpolated value is escaped, unless it is already Html (a fragment built
 * the same way). Text an agent wrote is first made visible and bounded by showUntrusted (src/util/untrusted.ts), then
 * escaped here like everything else: a browser neither runs it nor lets it pose as the signer's own figures.
 */
import { showUntrusted } from '../util/untrusted';

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

type Value = Html | string | number | null | undefined | readonly Html[];

function piece(v: Value): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Html[]).map((h) => h.text).join('');
  if (v === null || v === undefined) return '';
  return escapeHtml(String(v));
}

/** A template whose values are escaped: html`<td>${text}</td>`. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += piece(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** An agent's text for a page: visible escapes for controls and invisible characters, bounded, then HTML-escaped. */
export function untrusted(text: string, max?: number): Html {
  return new Html(escapeHtml(showUntrusted(text, max)));
}
