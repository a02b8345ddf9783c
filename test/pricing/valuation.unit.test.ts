/** Amounts in dollars: exact integer math, spends at price + confidence rounded up, receipts the other way. */
import fc from 'fast-check';
import {
  parsePythDecimal,
  pythDecimal,
  receiptUsd,
  SOL_DECIMALS,
  spendUsd,
  type UsdPrice,
} from '../../src/pricing/valuation';

const SOL_150_25: UsdPrice = { price: 15_025_000_000n, conf: 5_000_000n, exponent: -8 }; // 150.25 ± 0.05

test('one SOL spent is worth price + confidence: $150.30', () => {
  expect(spendUsd(1_000_000_000n, SOL_DECIMALS, SOL_150_25)).toBe(150_300_000n);
});

test('one SOL received is worth price − confidence: $150.20', () => {
  expect(receiptUsd(1_000_000_000n, SOL_DECIMALS, SOL_150_25)).toBe(150_200_000n);
});

test('one lamport spent rounds up to a micro-dollar; received, it rounds down to nothing', () => {
  // 1 lamport × 150.30 = 0.00000015030 dollars = 0.1503 micro-dollars.
  expect(spendUsd(1n, SOL_DECIMALS, SOL_150_25)).toBe(1n);
  expect(receiptUsd(1n, SOL_DECIMALS, SOL_150_25)).toBe(0n);
});

test('an amount that values to whole micro-dollars is not rounded up', () => {
  // 10 lamports × 150.30 = 1503 × 10^-9 dollars = 1.503 micro-dollars → 2; 10^4 lamports → exactly 1503.
  expect(spendUsd(10n, SOL_DECIMALS, SOL_150_25)).toBe(2n);
  expect(spendUsd(10_000n, SOL_DECIMALS, SOL_150_25)).toBe(1503n);
});

test('a 6-decimal token at 0.99995 ± 0.00012 and a positive exponent', () => {
  const usdc: UsdPrice = { price: 99_995_000n, conf: 12_000n, exponent: -8 };
  expect(spendUsd(5_000_000n, 6, usdc)).toBe(5_000_350n); // 5 × 1.00007
  expect(receiptUsd(5_000_000n, 6, usdc)).toBe(4_999_150n); // 5 × 0.99983
  const thousands: UsdPrice = { price: 3n, conf: 0n, exponent: 3 }; // $3000 a whole token
  expect(spendUsd(2n, 0, thousands)).toBe(6_000_000_000n);
});

test('a confidence wider than the price values a receipt at zero, never negative', () => {
  expect(receiptUsd(1_000_000_000n, SOL_DECIMALS, { price: 10n, conf: 20n, exponent: 0 })).toBe(0n);
});

test('a negative amount is a programming error', () => {
  expect(() => spendUsd(-1n, SOL_DECIMALS, SOL_150_25)).toThrow(RangeError);
});

test('spend is never below the exact value and less than a micro-dollar above it; receipt the mirror', () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      fc.integer({ min: 0, max: 12 }),
      fc.bigInt({ min: 1n, max: (1n << 63n) - 1n }),
      fc.bigInt({ min: 0n, max: 1n << 40n }),
      fc.integer({ min: -12, max: 4 }),
      (amount, decimals, price, conf, exponent) => {
        const p = { price, conf, exponent };
        // exact value × 10^k as an integer fraction, k chosen so both sides are whole
        const k = BigInt(12 + decimals);
        const exact = (perUnit: bigint): bigint =>
          (amount * perUnit * 10n ** (k + BigInt(exponent)) * 1_000_000n) / 10n ** BigInt(decimals);
        const spend = spendUsd(amount, decimals, p) * 10n ** k;
        expect(spend >= exact(price + conf) && spend < exact(price + conf) + 10n ** k).toBe(true);
        const under = price - conf > 0n ? price - conf : 0n;
        const receipt = receiptUsd(amount, decimals, p) * 10n ** k;
        expect(receipt <= exact(under) && receipt > exact(under) - 10n ** k).toBe(true);
      },
    ),
  );
});

test('Pyth figures as exact decimals', () => {
  expect(pythDecimal(15_025_000_000n, -8)).toBe('150.25');
  expect(pythDecimal(1_50250001n, -8)).toBe('1.50250001');
  expect(pythDecimal(3n, 3)).toBe('3000');
  expect(pythDecimal(-5n, -2)).toBe('-0.05');
});

test('decimals parse to Pyth mantissas exactly, and a figure finer than the exponent keeps is refused', () => {
  expect(parsePythDecimal('150.25', -8)).toBe(15_025_000_000n);
  expect(parsePythDecimal('0.00000001', -8)).toBe(1n);
  expect(parsePythDecimal('1.500000000', -8)).toBe(150_000_000n);
  expect(parsePythDecimal('1.000000001', -8)).toBeNull();
  expect(parsePythDecimal('3000', 3)).toBe(3n);
  expect(parsePythDecimal('3500', 3)).toBeNull();
  for (const bad of ['-1', '1e3', '', '.5', '1,5']) expect(parsePythDecimal(bad, -8)).toBeNull();
  expect(pythDecimal(parsePythDecimal('150.25', -8)!, -8)).toBe('150.25');
});
