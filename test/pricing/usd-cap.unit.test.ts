/**
 * The dollar caps as one rule: several assets in one transaction add up at price + confidence, a swap is judged
 * by what leaves the key, the daily cap passes at exactly its figure and refuses a micro-dollar over, and a
 * missing price or mint refuses rather than counting as free.
 */
import { address } from '@solana/kit';
import type { KeyUsdCaps } from '../../src/config/types';
import type { CheckedPrice } from '../../src/pricing/price-check';
import { judgeUsdCaps, outflowsOf, type Outflow } from '../../src/pricing/usd-cap';
import type { MintMovement } from '../../src/signer/spl-tokens/movements';
import type { MintState } from '../../src/signer/spl-tokens/state';

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
const caps = (c: Partial<KeyUsdCaps>): KeyUsdCaps => ({ per_tx: null, per_day: null, approve_above: null, ...c });
const sol = (lamports: bigint): Outflow => ({ asset: 'SOL', amount: lamports, decimals: 9 });
const token = (units: bigint): Outflow => ({ asset: MINT, amount: units, decimals: 6 });

test('SOL and a token in one transaction add up, each at price + confidence', () => {
  // 0.01 SOL = $1.503; 2 tokens = $2.00.
  const j = judgeUsdCaps(caps({}), [sol(10_000_000n), token(2_000_000n)], PRICES, 0n);
  expect(j.ok && { usd: j.usd, each: j.valued.map((v) => v.usd) }).toEqual({
    usd: 3_503_000n,
    each: [1_503_000n, 2_000_000n],
  });
});

test('the daily cap passes a spend that reaches it exactly and refuses one a micro-dollar over', () => {
  const day = caps({ per_day: 5_000_000n });
  // $1.497 already spent + 0.01 SOL ($1.503) + 2 tokens ($2.00) = $5.00 exactly.
  const exact = judgeUsdCaps(day, [sol(10_000_000n), token(2_000_000n)], PRICES, 1_497_000n);
  expect(exact.ok && exact.remainingDaily).toBe(0n);
  const over = judgeUsdCaps(day, [sol(10_000_000n), token(2_000_000n)], PRICES, 1_497_001n);
  expect(over.ok || over.refusal).toEqual({
    check: 'limits',
    reason: 'usd_per_day_cap',
    message: expect.stringContaining('$1.497001 spent or reserved in 24 h, plus $3.503') as string,
    figures: { usd_spent: '1.497001', usd_requested: '3.503', usd_cap: '5.00' },
  });
});

test('two $4 signs under a $5 daily cap: the second is refused', () => {
  const day = caps({ per_day: 5_000_000n });
  const four = [token(4_000_000n)];
  const first = judgeUsdCaps(day, four, PRICES, 0n);
  expect(first.ok && first.usd).toBe(4_000_000n);
  const second = judgeUsdCaps(day, four, PRICES, first.ok ? first.usd : 0n);
  expect(second.ok || second.refusal.reason).toBe('usd_per_day_cap');
});

test('the per-transaction cap refuses above it, with the figures', () => {
  const r = judgeUsdCaps(caps({ per_tx: 1_500_000n }), [sol(10_000_000n)], PRICES, 0n);
  expect(r.ok || r.refusal).toMatchObject({
    reason: 'usd_per_tx_cap',
    figures: { usd_requested: '1.503', usd_cap: '1.50' },
  });
  expect(judgeUsdCaps(caps({ per_tx: 1_503_000n }), [sol(10_000_000n)], PRICES, 0n).ok).toBe(true);
});

test('above approve_above the sign would need an operator; at it, not', () => {
  const at = judgeUsdCaps(caps({ approve_above: 2_000_000n }), [token(2_000_000n)], PRICES, 0n);
  expect(at.ok && at.wouldNeedApproval).toBe(false);
  const above = judgeUsdCaps(caps({ approve_above: 1_999_999n }), [token(2_000_000n)], PRICES, 0n);
  expect(above.ok && above.wouldNeedApproval).toBe(true);
});

test('an asset without a price is refused, never valued at zero', () => {
  const r = judgeUsdCaps(caps({ per_day: 5_000_000n }), [sol(1n)], new Map(), 0n);
  expect(r.ok || r.refusal).toMatchObject({ check: 'price', reason: 'price_unavailable' });
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
