/** Dollar strings parse and print exactly, and a bare number is refused with the string to write instead. */
import { formatUsd, parseUsd } from '../../src/util/usd-amounts';

test.each([
  ['250.00', 250_000_000n],
  ['250', 250_000_000n],
  ['4.9', 4_900_000n],
  ['0.01', 10_000n],
  ['0', 0n],
  [' 5.00 ', 5_000_000n],
  ['9999999999999.99', 9_999_999_999_999_990_000n],
])('"%s" is %p micro-dollars', (text, micros) => {
  expect(parseUsd(text)).toEqual({ ok: true, micros });
});

test.each(['$5', '-5', '5.001', '1,000', '1e3', '05', '.5', '5.', '', '10000000000000', 'NaN'])(
  '"%s" is refused with the form to use',
  (text) => {
    const r = parseUsd(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('at most two decimals');
  },
);

test('a number is refused because it could mean dollars or cents', () => {
  expect(parseUsd(5)).toEqual({
    ok: false,
    message:
      'write dollars as a string with cents, like "5.00": a number is refused because it could mean dollars or cents',
  });
  expect(parseUsd(null).ok).toBe(false);
});

test.each([
  [4_000_000n, '4.00'],
  [4_500_000n, '4.50'],
  [4_000_001n, '4.000001'],
  [10_000n, '0.01'],
  [0n, '0.00'],
  [-1_250_000n, '-1.25'],
])('%p micro-dollars print as %s, and parse back when in cents', (micros, text) => {
  expect(formatUsd(micros)).toBe(text);
  if (micros >= 0n && micros % 10_000n === 0n) expect(parseUsd(text)).toEqual({ ok: true, micros });
});
