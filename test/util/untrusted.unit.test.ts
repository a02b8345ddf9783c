import { escapeUntrusted, showUntrusted } from '../../src/util/untrusted';

describe('untrusted text shown to an operator', () => {
  it('shows ANSI and OSC escape sequences as visible escapes', () => {
    const forged = '\u001b[2K\u001b[1A approve 1 M\u001b]0;title\u0007';
    const shown = escapeUntrusted(forged);
    expect(shown).toBe('\\x1b[2K\\x1b[1A approve 1 M\\x1b]0;title\\x07');
    // eslint-disable-next-line no-control-regex -- the assertion is that none survive
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  it('never lets an agent forge a new line or return to its start', () => {
    expect(escapeUntrusted('ok\nkey demo approved\r')).toBe('ok\\nkey demo approved\\r');
    expect(escapeUntrusted('a\u2028b\u2029c\u0085d')).toBe('a\\u2028b\\u2029c\\x85d');
  });

  it('shows bidi overrides and zero-width characters', () => {
    expect(escapeUntrusted('pay \u202e0001\u202c')).toBe('pay \\u202e0001\\u202c');
    expect(escapeUntrusted('a\u200bb\ufeffc\u2066d')).toBe('a\\u200bb\\ufeffc\\u2066d');
  });

  it('escapes a backslash so a typed escape cannot pass for a real one', () => {
    expect(escapeUntrusted('\\x1b')).toBe('\\\\x1b');
  });

  it('keeps ordinary text, accents and emoji as they are', () => {
    const text = 'Pay Zoë 0.5 SOL for the café ☕ 🚀';
    expect(escapeUntrusted(text)).toBe(text);
  });

  it('shows a lone surrogate as an escape', () => {
    expect(escapeUntrusted('a\ud800b')).toBe('a\\ud800b');
  });

  it('bounds the length and says how much was cut', () => {
    const shown = showUntrusted('x'.repeat(600), 512);
    expect(shown).toBe(`${'x'.repeat(512)}… (88 more characters)`);
    expect(showUntrusted('short')).toBe('short');
  });
});
