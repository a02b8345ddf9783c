/**
 * `prices` and a key's `usd` caps: dollars parse exactly from strings and a bare number is refused, feed ids are
 * normalized, and a key with dollar caps cannot load without a price for SOL and for each mint it may spend.
 */
import { loadConfig } from '../../src/config';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { isSignerError } from '../../src/util/errors';

const A = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';
const MINT = 'GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL';
const SOL = KNOWN_FEEDS['SOL/USD'];
const USDC = KNOWN_FEEDS['USDC/USD'];

const solFeed = { asset: 'SOL', account: SOL.sponsoredAccount, feed_id: `0x${SOL.feedId.toUpperCase()}` };
const mintFeed = { asset: MINT, account: USDC.sponsoredAccount, feed_id: USDC.feedId };

function load(key: Record<string, unknown>, prices: Record<string, unknown> = {}) {
  return loadConfig({
    overrides: { keys: { play: { class: 'session', pubkey: A, ...key } }, prices },
    env: {},
  });
}

function refusal(key: Record<string, unknown>, prices: Record<string, unknown> = {}): string {
  try {
    load(key, prices);
  } catch (e) {
    expect(isSignerError(e) && e.code).toBe('config_invalid');
    return (e as Error).message;
  }
  throw new Error('the config loaded');
}

test('defaults: 60 s, 100 bps, Full only, no feeds; a key without `usd` has no dollar caps', () => {
  const cfg = load({});
  expect(cfg.prices?.bounds).toEqual({ maxAgeS: 60, maxConfidenceBps: 100, allowPartial: false });
  expect(cfg.prices?.feeds.size).toBe(0);
  expect(cfg.keys[0]!.usd).toBeNull();
});

test('dollar caps resolve to micro-dollars and feeds to lowercase ids by asset', () => {
  const cfg = load(
    {
      usd: { per_tx: '5', per_day: '50.25' },
      tokens: [{ mint: MINT, per_day: 1000 }],
    },
    { feeds: [solFeed, mintFeed], max_age_s: 30 },
  );
  expect(cfg.keys[0]!.usd).toEqual({ per_tx: 5_000_000n, per_day: 50_250_000n, approve_above: null });
  expect(cfg.prices?.bounds.maxAgeS).toBe(30);
  expect(cfg.prices?.feeds.get('SOL')).toEqual({ label: 'SOL', account: SOL.sponsoredAccount, feedId: SOL.feedId });
  expect(cfg.prices?.feeds.get(MINT)?.feedId).toBe(USDC.feedId);
});

test('a dollar cap written as a number is refused, naming the string to write', () => {
  expect(refusal({ usd: { per_day: 5 } }, { feeds: [solFeed] })).toMatch(
    /keys\.play\.usd\.per_day: .*write dollars as a string with cents, like "5\.00"/,
  );
});

test('a dollar cap with fractions of a cent is refused', () => {
  expect(refusal({ usd: { per_day: '5.001' } }, { feeds: [solFeed] })).toMatch(/at most two decimals/);
});

test('a key with dollar caps needs a price for SOL and for each of its mints', () => {
  expect(refusal({ usd: { per_day: '5.00' } })).toMatch(/keys\.play\.usd: no price for SOL; add/);
  expect(refusal({ usd: { per_day: '5.00' }, tokens: [{ mint: MINT, per_day: 1 }] }, { feeds: [solFeed] })).toMatch(
    new RegExp(`keys\\.play\\.usd: no price for ${MINT}`),
  );
});

test('a feed entry names its fault: a bad feed id, an asset twice, an asset that is neither SOL nor a mint', () => {
  expect(refusal({}, { feeds: [{ ...solFeed, feed_id: 'abc' }] })).toMatch(
    /prices\.feeds\[0\]\.feed_id: must be a Pyth feed id/,
  );
  expect(refusal({}, { feeds: [solFeed, solFeed] })).toMatch(/prices\.feeds\[1\]\.asset: SOL is priced twice/);
  expect(refusal({}, { feeds: [{ ...solFeed, asset: 'ETH' }] })).toMatch(
    /prices\.feeds\[0\]\.asset: must be SOL or a mint/,
  );
});
