/**
 * Which price accounts may value a spend, one row per refusal, with the boundaries: a price exactly `max_age_s`
 * old passes and one second older is stale; a confidence interval exactly `max_confidence_bps` wide passes and one
 * unit wider is uncertain.
 */
import { address } from '@solana/kit';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { checkPrice, type PriceBounds, type PriceSource } from '../../src/pricing/price-check';
import {
  encodePriceUpdateV2,
  PYTH_RECEIVER_PROGRAM,
  type PriceUpdateV2,
  type VerificationLevel,
} from '../../src/pricing/price-update';

const SOL = KNOWN_FEEDS['SOL/USD'];
const source: PriceSource = { label: 'SOL/USD', account: SOL.sponsoredAccount, feedId: SOL.feedId };
const bounds: PriceBounds = { maxAgeS: 60, maxConfidenceBps: 100, allowPartial: false };
const CLOCK = 1_765_000_000n;

function account(
  o: { price?: bigint; conf?: bigint; publishTime?: bigint; feedId?: string; level?: VerificationLevel } = {},
) {
  const update: PriceUpdateV2 = {
    writeAuthority: address('6W3LBzFmXKFJaN4RT3uh8rJ4sYCF8cjVmgVbfh4nw2Sj'),
    verificationLevel: o.level ?? { __kind: 'Full' },
    priceMessage: {
      feedId: o.feedId ?? SOL.feedId,
      price: o.price ?? 15_025_000_000n, // 150.25 at exponent -8
      conf: o.conf ?? 5_000_000n, // 0.05
      exponent: -8,
      publishTime: o.publishTime ?? CLOCK - 5n,
      prevPublishTime: CLOCK - 6n,
      emaPrice: 15_000_000_000n,
      emaConf: 6_000_000n,
    },
    postedSlot: 1n,
  };
  return { owner: PYTH_RECEIVER_PROGRAM, data: encodePriceUpdateV2(update) };
}

test('a fresh, full, narrow price of the configured feed passes, with what the ledger records', () => {
  expect(checkPrice(source, bounds, account(), CLOCK)).toEqual({
    ok: true,
    price: {
      account: SOL.sponsoredAccount,
      feedId: SOL.feedId,
      price: 15_025_000_000n,
      conf: 5_000_000n,
      exponent: -8,
      publishTime: CLOCK - 5n,
      clockTime: CLOCK,
      ageS: 5n,
      verification: { __kind: 'Full' },
    },
  });
});

test('price_unavailable: no account at the address', () => {
  const r = checkPrice(source, bounds, null, CLOCK);
  expect(r.ok || r.refusal).toMatchObject({
    check: 'price',
    reason: 'price_unavailable',
    figures: { price_account: SOL.sponsoredAccount, feed_id: SOL.feedId },
  });
});

test('price_unavailable: a receiver account that is not a PriceUpdateV2, or a price of zero', () => {
  const notPrice = checkPrice(source, bounds, { owner: PYTH_RECEIVER_PROGRAM, data: new Uint8Array(200) }, CLOCK);
  expect(notPrice.ok || notPrice.refusal.reason).toBe('price_unavailable');
  const zero = checkPrice(source, bounds, account({ price: 0n, conf: 0n }), CLOCK);
  expect(zero.ok || zero.refusal).toMatchObject({ reason: 'price_unavailable' });
  if (!zero.ok) expect(zero.refusal.message).toContain('carries a price of 0');
});

test('price_unverified: the same bytes in an account another program owns', () => {
  const other = address('11111111111111111111111111111111');
  const r = checkPrice(source, bounds, { ...account(), owner: other }, CLOCK);
  expect(r.ok || r.refusal).toMatchObject({ reason: 'price_unverified', figures: { owner: other } });
});

test('price_unverified: another feed id', () => {
  const usdc = KNOWN_FEEDS['USDC/USD'].feedId;
  const r = checkPrice(source, bounds, account({ feedId: usdc }), CLOCK);
  expect(r.ok || r.refusal).toMatchObject({
    reason: 'price_unverified',
    figures: { feed_id: SOL.feedId, account_feed_id: usdc },
  });
});

test('price_unverified: partial verification, unless the operator allows it', () => {
  const partial = account({ level: { __kind: 'Partial', numSignatures: 5 } });
  const r = checkPrice(source, bounds, partial, CLOCK);
  expect(r.ok || r.refusal).toMatchObject({
    reason: 'price_unverified',
    figures: { verification: 'Partial (5 signatures)' },
  });
  expect(checkPrice(source, { ...bounds, allowPartial: true }, partial, CLOCK).ok).toBe(true);
});

test('price_stale: exactly max_age_s old passes, one second older is refused with the figures', () => {
  expect(checkPrice(source, bounds, account({ publishTime: CLOCK - 60n }), CLOCK).ok).toBe(true);
  const r = checkPrice(source, bounds, account({ publishTime: CLOCK - 61n }), CLOCK);
  expect(r.ok || r.refusal).toEqual({
    check: 'price',
    reason: 'price_stale',
    message: expect.stringContaining('61 s before the cluster') as string,
    figures: {
      price_account: SOL.sponsoredAccount,
      publish_time: Number(CLOCK - 61n),
      clock_time: Number(CLOCK),
      age_s: 61,
      max_age_s: 60,
    },
  });
});

test("a price published after the cluster's clock is fresh, at age 0", () => {
  const r = checkPrice(source, bounds, account({ publishTime: CLOCK + 3n }), CLOCK);
  expect(r.ok && r.price.ageS).toBe(0n);
});

test('price_uncertain: a confidence of exactly max_confidence_bps passes, one unit wider is refused', () => {
  // 100 bps of 150.25 is 1.5025, 150_250_000 at exponent -8.
  expect(checkPrice(source, bounds, account({ conf: 150_250_000n }), CLOCK).ok).toBe(true);
  const r = checkPrice(source, bounds, account({ conf: 150_250_001n }), CLOCK);
  expect(r.ok || r.refusal).toEqual({
    check: 'price',
    reason: 'price_uncertain',
    message: expect.stringContaining('150.25 ± 1.50250001 dollars') as string,
    figures: {
      price_account: SOL.sponsoredAccount,
      price: '150.25',
      confidence: '1.50250001',
      confidence_bps: 101,
      max_confidence_bps: 100,
    },
  });
});
