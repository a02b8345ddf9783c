/**
 * Dollar-sized allowances (docs/treasury.md): a treasury key with `usd.per_day` plans, per account, the smaller of
 * the mint's per_day and the dollar cap converted at the mint's price plus its confidence (the side that gives
 * fewer base units), read and checked from the embedded chain's Pyth account as a sign reads it; and says which.
 */
import type { Blockhash } from '@solana/kit';
import type { PricesConfig } from '../../src/config/types';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { spendUsd } from '../../src/pricing/valuation';
import { approveTransaction, checkApproveTransaction } from '../../src/treasury/approve-transaction';
import { planTreasury, treasuryStatus } from '../../src/treasury/status';
import { unitsForUsd } from '../../src/treasury/usd-allowance';
import { chainClientFor } from '../../src/rpc/for-cluster';
import type { RpcClient } from '../../src/rpc/types';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import { makeWorld, type World } from '../support/world';
import { tokenPolicy } from '../signer/policy/fixtures';
import { dollars } from '../support/prices';

const M = 1_000_000n;
const MINT = randomAddress();
const OWNER = randomAddress();
const FEED = KNOWN_FEEDS['USDC/USD'];
const prices: PricesConfig = {
  bounds: { maxAgeS: 60, maxConfidenceBps: 200, allowPartial: false },
  feeds: new Map([[MINT, { label: 'USDC', account: FEED.sponsoredAccount, feedId: FEED.feedId }]]),
};
const policy = tokenPolicy(MINT, { per_day: 5n * M });

let w: World;
let chain: RpcClient;
let account: string;

beforeAll(async () => {
  w = await makeWorld({
    keys: { agent: { tokens: [policy], usd: { per_tx: null, per_day: dollars('3.00'), approve_above: null } } },
    prices,
  });
  chain = chainClientFor(w.config.cluster, w.config.timings);
  setMint(w.localnet, MINT, { decimals: 6 });
  account = setTokenAccount(w.localnet, { mint: MINT, owner: OWNER, amount: 100n * M });
  w.keys.agent!.treasury = { owner: OWNER, accounts: [account], refill_below_percent: 50 };
});
afterAll(() => w.close());

const setUsdc = (price: string, conf: string, ageS = 0) =>
  w.localnet.setPrice({ account: FEED.sponsoredAccount, feedId: FEED.feedId, price, conf, ageS });

describe('unitsForUsd', () => {
  it('is the most base units whose value at price + confidence stays within the cap', () => {
    const p = { price: 100_000_000n, conf: 1_000_000n, exponent: -8 }; // $1.00 ± $0.01
    const units = unitsForUsd(dollars('3.00'), 6, p);
    expect(units).toBe(2_970_297n);
    expect(spendUsd(units, 6, p)).toBeLessThanOrEqual(dollars('3.00'));
    expect(spendUsd(units + 1n, 6, p)).toBeGreaterThan(dollars('3.00'));
    // At the bottom of the interval the same cap would buy more: the top is the smaller, safe allowance.
    expect(unitsForUsd(dollars('3.00'), 6, { ...p, conf: -p.conf })).toBeGreaterThan(units);
    expect(unitsForUsd(dollars('3.00'), 6, { price: 0n, conf: 0n, exponent: -8 })).toBe(0n);
  });
});

describe('a treasury plan with usd.per_day', () => {
  it('takes the dollar cap converted at price + confidence when it is below the mint’s per_day, and says so', async () => {
    setUsdc('1.00', '0.01');
    const planned = await planTreasury(chain, w.keys.agent!, prices);
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.plans).toEqual([
      expect.objectContaining({ account, mint: MINT, amount: 2_970_297n, basis: 'usd.per_day' }),
    ]);
    expect(planned.plans[0]!.why).toBe(
      "usd.per_day $3.00 is 2970297 base units at the price plus its confidence, below the mint's per_day 5000000",
    );
  });

  it('keeps the mint’s per_day when the dollar cap buys more, and says that too', async () => {
    setUsdc('0.50', '0.005'); // $3.00 buys about 5.94 tokens at $0.505
    const planned = await planTreasury(chain, w.keys.agent!, prices);
    if (!planned.ok) throw new Error(planned.message);
    expect(planned.plans[0]).toMatchObject({ amount: 5n * M, basis: 'tokens.per_day' });
    expect(planned.plans[0]!.why).toContain('usd.per_day $3.00 is 5940594 base units');
  });

  it('makes no plan from a stale price rather than fall back to a larger allowance', async () => {
    setUsdc('1.00', '0.01', 600);
    const planned = await planTreasury(chain, w.keys.agent!, prices);
    expect(planned).toMatchObject({ ok: false, code: 'treasury_price_unavailable' });
    expect(!planned.ok && planned.message).toContain('price_stale');
  });

  it('a price read that fails leaves the accounts’ state readable (reconciliation and the console need it)', async () => {
    setUsdc('1.00', '0.01');
    // The real chain, with the price account's read failing as an RPC outage would make it.
    const flaky = {
      getAccountsData: (addresses: string[]) =>
        addresses.includes(FEED.sponsoredAccount)
          ? Promise.reject(new Error('price node down'))
          : chain.getAccountsData(addresses),
    };
    const status = await treasuryStatus(flaky, w.keys.agent!, prices);
    expect(status?.problem).toEqual({ code: 'treasury_price_unavailable', message: 'price node down' });
    expect(status?.accounts).toHaveLength(1);
    expect(status?.accounts[0]).toMatchObject({ account, plan: null, refillDue: false, chain: { mint: MINT } });
  });

  it('submit takes an approval of at most a dollar-sized plan (the price moves), never more', async () => {
    setUsdc('1.00', '0.01');
    const planned = await planTreasury(chain, w.keys.agent!, prices);
    if (!planned.ok) throw new Error(planned.message);
    const blockhash = (await chain.getLatestBlockhash()).blockhash as Blockhash;
    const at = (amount: bigint) =>
      approveTransaction(
        planned.plans.map((p) => ({ ...p, amount })),
        { blockhash, lastValidBlockHeight: 1_000n },
      );
    expect(checkApproveTransaction(at(2_970_297n), planned.plans)).toEqual({ ok: true });
    expect(checkApproveTransaction(at(2_900_000n), planned.plans)).toEqual({ ok: true });
    expect(checkApproveTransaction(at(2_970_298n), planned.plans)).toMatchObject({
      ok: false,
      code: 'treasury_submit_mismatch',
    });
    expect(checkApproveTransaction(at(0n), planned.plans)).toMatchObject({ ok: false });
    // A plan sized by per_day is exact: a smaller amount there is not what the operator reviewed.
    const exact = planned.plans.map((p) => ({ ...p, basis: 'tokens.per_day' as const }));
    expect(checkApproveTransaction(at(2_900_000n), exact)).toMatchObject({ ok: false });
  });
});
