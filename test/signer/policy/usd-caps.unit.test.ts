/**
 * The dollar caps as rules of the policy core: several assets in one transaction add up at price + confidence, a
 * swap is judged by what leaves the key, the daily cap passes at exactly its figure and refuses a micro-dollar
 * over, approve_above decides approval for a confirm key, and a missing price or mint refuses rather than counting
 * as free.
 */
import { address } from '@solana/kit';
import type { KeyConfig, KeyUsdCaps } from '../../../src/config/types';
import type { CheckedPrice } from '../../../src/pricing/price-check';
import { outflowsOf, valueOutflows, type Outflow, type UsdSpend } from '../../../src/pricing/usd-spend';
import { decide } from '../../../src/signer/policy/decide';
import { remainingDailyUsd, usdCapRefusal, usdNeedsApproval } from '../../../src/signer/policy/rules/usd-caps';
import type { MintMovement } from '../../../src/signer/spl-tokens/movements';
import type { MintState } from '../../../src/solana/token-state';
import { listed, policyKey, usage } from './fixtures';

const MINT = 'GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL';

function price(p: bigint, conf: bigint): CheckedPrice {
  return {
    account: address('7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE'),
    feedId: 'ef'.repeat(32),
    price: p,
    conf,
    exponent: -8,
    publishTime: 1_765_000_000n,
    clockTime: 1_765_000_001n,
    ageS: 1n,
    verification: { __kind: 'Full' },
  };
}

// SOL at 150.25 ± 0.05 (spends count at 150.30); the token at 0.99995 ± 0.00005 (spends count at 1.00).
const PRICES = new Map([
  ['SOL', price(15_025_000_000n, 5_000_000n)],
  [MINT, price(99_995_000n, 5_000n)],
]);
const keyWith = (c: Partial<KeyUsdCaps>, over: Partial<KeyConfig> = {}): KeyConfig =>
  policyKey({ usd: { per_tx: null, per_day: null, approve_above: null, ...c }, ...over });
const sol = (lamports: bigint): Outflow => ({ asset: 'SOL', amount: lamports, decimals: 9 });
const token = (units: bigint): Outflow => ({ asset: MINT, amount: units, decimals: 6 });
const valued = (outflows: Outflow[]): UsdSpend => valueOutflows(outflows, PRICES);

test('SOL and a token in one transaction add up, each at price + confidence', () => {
  // 0.01 SOL = $1.503; 2 tokens = $2.00.
  const v = valued([sol(10_000_000n), token(2_000_000n)]);
  expect(v.ok && { usd: v.usd, each: v.valued.map((o) => o.usd) }).toEqual({
    usd: 3_503_000n,
    each: [1_503_000n, 2_000_000n],
  });
});

test('the daily cap passes a spend that reaches it exactly and refuses one a micro-dollar over', () => {
  const day = keyWith({ per_day: 5_000_000n });
  // $1.497 already spent + 0.01 SOL ($1.503) + 2 tokens ($2.00) = $5.00 exactly.
  const spend = valued([sol(10_000_000n), token(2_000_000n)]);
  expect(usdCapRefusal(day, spend, 1_497_000n)).toBeNull();
  expect(remainingDailyUsd(day, 1_497_000n, spend)).toBe(0n);
  expect(usdCapRefusal(day, spend, 1_497_001n)).toEqual({
    check: 'limits',
    reason: 'usd_per_day_cap',
    message: expect.stringContaining('$1.497001 spent or reserved in 24 h, plus $3.503') as string,
    figures: { usd_spent: '1.497001', usd_requested: '3.503', usd_cap: '5.00' },
  });
});

test('two $4 signs under a $5 daily cap: the second is refused', () => {
  const day = keyWith({ per_day: 5_000_000n });
  const four = valued([token(4_000_000n)]);
  expect(usdCapRefusal(day, four, 0n)).toBeNull();
  expect(usdCapRefusal(day, four, four.ok ? four.usd : 0n)?.reason).toBe('usd_per_day_cap');
});

test('the per-transaction cap refuses above it, with the figures', () => {
  const spend = valued([sol(10_000_000n)]);
  expect(usdCapRefusal(keyWith({ per_tx: 1_500_000n }), spend, null)).toMatchObject({
    reason: 'usd_per_tx_cap',
    figures: { usd_requested: '1.503', usd_cap: '1.50' },
  });
  expect(usdCapRefusal(keyWith({ per_tx: 1_503_000n }), spend, null)).toBeNull();
});

test('above approve_above a confirm key would need an operator; at it, not; an auto key never', () => {
  const two = valued([token(2_000_000n)]);
  expect(usdNeedsApproval(keyWith({ approve_above: 2_000_000n }, { approval: 'confirm' }), two)).toBe(false);
  expect(usdNeedsApproval(keyWith({ approve_above: 1_999_999n }, { approval: 'confirm' }), two)).toBe(true);
  expect(usdNeedsApproval(keyWith({ approve_above: 1_999_999n }), two)).toBeNull();
});

test('an asset without a price is refused, never valued at zero', () => {
  const spend = valueOutflows([sol(1n)], new Map());
  expect(usdCapRefusal(keyWith({ per_day: 5_000_000n }), spend, 0n)).toMatchObject({
    check: 'price',
    reason: 'price_unavailable',
  });
});

test('a key with dollar caps and no prices read is refused price_unavailable; a key without caps is not judged', () => {
  expect(usdCapRefusal(keyWith({ per_day: 5_000_000n }), null, 0n)?.reason).toBe('price_unavailable');
  expect(usdCapRefusal(policyKey(), null, 0n)).toBeNull();
});

describe('decide at "simulated"', () => {
  const moves = {
    balanceChange: -500_000,
    gains: [{ address: listed, lamports: 495_000, created: false, owner: '11111111111111111111111111111111' }],
    tokens: { mints: [], authority: [] },
    mints: new Map(),
  };
  test('reports the dollar value and refuses above usd.per_tx', () => {
    const spend = valued([sol(500_000n)]); // 0.0005 SOL at $150.30: $0.07515
    const ok = decide(keyWith({ per_tx: 80_000n }), { at: 'simulated', moves, usd: spend, usage: usage() });
    expect(ok).toMatchObject({ outcome: 'allowed', figures: { usdValue: 75_150n } });
    const no = decide(keyWith({ per_tx: 70_000n }), { at: 'simulated', moves, usd: spend, usage: usage() });
    expect(no).toMatchObject({ outcome: 'refused', refusal: { reason: 'usd_per_tx_cap' } });
  });
  test('a price refusal carried in the facts refuses', () => {
    const stale: UsdSpend = {
      ok: false,
      refusal: { check: 'price', reason: 'price_stale', message: 'stale', figures: { age_s: 61, max_age_s: 60 } },
    };
    expect(decide(keyWith({ per_day: 5_000_000n }), { at: 'simulated', moves, usd: stale, usage: null })).toMatchObject(
      { outcome: 'refused', refusal: { reason: 'price_stale' } },
    );
  });
});

describe('decide at the gate: the daily dollar cap on the recorded usage', () => {
  const moves = {
    balanceChange: -500_000,
    gains: [{ address: listed, lamports: 495_000, created: false, owner: '11111111111111111111111111111111' }],
    tokens: { mints: [], authority: [] },
    mints: new Map(),
  };
  const gate = (spent: bigint) =>
    decide(keyWith({ per_day: 1_000_000n }), {
      at: 'gate',
      moves,
      usd: valued([sol(500_000n)]), // $0.07515
      usage: usage({ usdMicros: spent }),
      halt: null,
      signature: null,
      signatureInFlight: false,
    });
  test('reaching the cap exactly passes, with nothing left; a micro-dollar more refuses', () => {
    expect(gate(924_850n)).toMatchObject({ outcome: 'allowed', figures: { usdValue: 75_150n, remainingDailyUsd: 0n } });
    expect(gate(924_851n)).toMatchObject({
      outcome: 'refused',
      refusal: { reason: 'usd_per_day_cap', figures: { usd_spent: '0.924851', usd_cap: '1.00' } },
    });
  });
});

describe('outflowsOf: what leaves the key, from the simulation', () => {
  const mintState = { decimals: 6 } as MintState;
  const movement = (keyChange: bigint): MintMovement => ({
    mint: MINT,
    program: 'spl-token',
    keyChange,
    credits: new Map(),
  });

  test('a swap SOL → token counts the SOL that leaves, not the token that arrives', () => {
    const r = outflowsOf(-10_005_000, [movement(2_000_000n)], new Map([[MINT, mintState]]));
    expect(r).toEqual({ ok: true, outflows: [sol(10_005_000n)] });
  });

  test('a swap token → SOL counts the token that leaves, not the SOL that arrives', () => {
    const r = outflowsOf(9_995_000, [movement(-2_000_000n)], new Map([[MINT, mintState]]));
    expect(r).toEqual({ ok: true, outflows: [token(2_000_000n)] });
  });

  test('a mint that moved but could not be read refuses', () => {
    const r = outflowsOf(-5000, [movement(-1n)], new Map([[MINT, null]]));
    expect(r.ok || r.refusal).toMatchObject({ reason: 'mint_unreadable', figures: { mint: MINT } });
  });
});
