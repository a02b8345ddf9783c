/**
 * Valuing a landed spend at the prices a sign recorded (src/pricing/recorded-prices.ts): the same arithmetic as the
 * sign's own valuation (price + confidence, rounded up), only recorded assets valued, and the tripwire's sentence
 * only for a landing worth more than was reserved.
 */
import type { UsdPriceFigure } from '../../src/ledger/types';
import { recordedPrices, usdOverspend, valueAtRecorded } from '../../src/pricing/recorded-prices';
import type { CheckedPrice } from '../../src/pricing/price-check';

const sol: UsdPriceFigure = {
  asset: 'SOL',
  decimals: 9,
  amount: '5000',
  usd_micros: '750',
  price: '15000000000',
  conf: '5000000',
  exponent: -8,
  publish_time: 1_800_000_000,
  account: 'Acc',
};

test('a recorded valuation keeps each checked price exactly as read', () => {
  const price = {
    price: 15_025_000_000n,
    conf: 5_000_000n,
    exponent: -8,
    account: 'Acc',
    publishTime: 1_800_000_000n,
  } as CheckedPrice;
  expect(recordedPrices([{ asset: 'SOL', amount: 1_000_000_000n, decimals: 9, usd: 150_300_000n, price }])).toEqual([
    {
      asset: 'SOL',
      decimals: 9,
      amount: '1000000000',
      usd_micros: '150300000',
      price: '15025000000',
      conf: '5000000',
      exponent: -8,
      publish_time: 1_800_000_000,
      account: 'Acc',
    },
  ]);
});

test('a landed amount is valued at the recorded price + confidence, rounded up; an unrecorded asset is named', () => {
  // 1 lamport at $150.05: $0.00000015005, rounded up to one micro-dollar.
  expect(valueAtRecorded([sol], new Map([['SOL', 1n]]))).toEqual({ usd: 1n, unpriced: [] });
  expect(valueAtRecorded([sol], new Map([['SOL', 1_000_000_000n]]))).toEqual({ usd: 150_050_000n, unpriced: [] });
  expect(
    valueAtRecorded(
      [sol],
      new Map([
        ['SOL', 0n],
        ['Mint', 7n],
      ]),
    ),
  ).toEqual({ usd: 0n, unpriced: ['Mint'] });
});

test('the tripwire sentence only for a landing worth more than reserved, with both figures', () => {
  expect(usdOverspend(750n, { usd: 750n, unpriced: [] })).toBeNull();
  expect(usdOverspend(750n, { usd: 751n, unpriced: [] })).toBe(
    '$0.000751 spent at the prices recorded at the sign, $0.00075 reserved',
  );
  expect(usdOverspend(0n, { usd: 1_000_000n, unpriced: ['Mint'] })).toBe(
    '$1.00 spent at the prices recorded at the sign, plus Mint which it had no price for, $0.00 reserved',
  );
});
