/**
 * Dollar caps on the real simulation of the embedded chain: the price accounts and the Clock sysvar ride in the
 * same getMultipleAccounts as the key's balances (no extra request), a transfer is valued from the lamports the
 * simulation says the key loses (fee included) at price + confidence, and a stale or impostor price refuses.
 */
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { pricePlan, type PricePlan } from '../../src/pricing/price-reads';
import { valueSpend } from '../../src/pricing/usd-spend';
import { usdCapRefusal } from '../../src/signer/policy/rules/usd-caps';
import { SOL_DECIMALS, spendUsd } from '../../src/pricing/valuation';
import type { PricesConfig } from '../../src/config/types';
import { chainClientFor } from '../../src/rpc/for-cluster';
import type { RpcClient } from '../../src/rpc/types';
import { simulate } from '../../src/signer/flow/simulate';
import { parsePayloadV1 } from '../../src/signer/payload';
import { v1Source } from '../../src/signer/sources/transaction';
import { makeWorld, type World } from '../support/world';

const SOL = KNOWN_FEEDS['SOL/USD'];
const prices: PricesConfig = {
  bounds: { maxAgeS: 60, maxConfidenceBps: 100, allowPartial: false },
  feeds: new Map([['SOL', { label: 'SOL', account: SOL.sponsoredAccount, feedId: SOL.feedId }]]),
};
const usd = { per_tx: null, per_day: 5_000_000n, approve_above: null };

let w: World;
let chain: RpcClient;
let plan: PricePlan;

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: { usd } }, blockIntervalMs: 0 });
  chain = chainClientFor(w.config.cluster, w.config.timings);
  plan = pricePlan(w.keys.alpha!, prices)!;
});
afterAll(() => w.close());

async function simulateTransfer(lamports: number, extra: readonly string[]) {
  const source = v1Source(parsePayloadV1(w.transfer('alpha', lamports)));
  const prepared = await source.prepare(await chain.getLatestBlockhash());
  if (!prepared.ok) throw new Error(prepared.refusal.message);
  return simulate(chain, source.unsigned(prepared.prepared), w.keys.alpha!, 'check', extra);
}

const setPrice = (ageS: number, owner?: string) =>
  w.localnet.setPrice({
    account: SOL.sponsoredAccount,
    feedId: SOL.feedId,
    price: '150.25',
    conf: '0.05',
    ageS,
    ...(owner === undefined ? {} : { owner }),
  });

test('the plan reads the SOL price account and then the Clock sysvar', () => {
  expect(plan.addresses).toEqual([SOL.sponsoredAccount, 'SysvarC1ock11111111111111111111111111111111']);
});

test('the prices ride in the balances read: the same number of getMultipleAccounts, no other request', async () => {
  setPrice(0);
  await simulateTransfer(10_000_000, []); // warm: genesis and blockhash kept from here on
  const count = () => ({ ...w.localnet.stats().calls });
  const before = count();
  await simulateTransfer(10_000_000, []);
  const plain = count();
  await simulateTransfer(10_000_000, plan.addresses);
  const priced = count();
  const delta = (a: Record<string, number>, b: Record<string, number>): Record<string, number> => {
    const moved: Record<string, number> = {};
    for (const [k, n] of Object.entries(b)) if (n !== (a[k] ?? 0)) moved[k] = n - (a[k] ?? 0);
    return moved;
  };
  expect(delta(plain, priced)).toEqual(delta(before, plain));
  expect(delta(plain, priced)['getMultipleAccounts']).toBe(1);
});

test('a transfer is valued from what the key loses, fee included, at price + confidence', async () => {
  setPrice(0);
  const figures = await simulateTransfer(20_000_000, plan.addresses);
  const lost = BigInt(-figures.balanceChange!);
  expect(lost).toBe(20_000_000n + BigInt(figures.fee!));
  const judged = valueSpend(plan, prices.bounds, figures);
  const at = { price: 15_025_000_000n, conf: 5_000_000n, exponent: -8 };
  expect(judged.ok && judged.usd).toBe(spendUsd(lost, SOL_DECIMALS, at));
  expect(judged.ok && judged.valued[0]?.price.account).toBe(SOL.sponsoredAccount);
});

test('the daily dollar cap refuses the spend that would pass it', async () => {
  setPrice(0);
  const figures = await simulateTransfer(20_000_000, plan.addresses); // about $3.01
  const refused = usdCapRefusal(w.keys.alpha!, valueSpend(plan, prices.bounds, figures), 2_000_000n);
  expect(refused?.reason).toBe('usd_per_day_cap');
});

test("a price older than max_age_s on the chain's clock refuses", async () => {
  setPrice(61);
  const figures = await simulateTransfer(20_000_000, plan.addresses);
  const judged = valueSpend(plan, prices.bounds, figures);
  expect(judged.ok || judged.refusal).toMatchObject({ reason: 'price_stale', figures: { age_s: 61, max_age_s: 60 } });
});

test('the same price in an account another program owns refuses', async () => {
  setPrice(0, '11111111111111111111111111111111');
  const figures = await simulateTransfer(20_000_000, plan.addresses);
  const judged = valueSpend(plan, prices.bounds, figures);
  expect(judged.ok || judged.refusal.reason).toBe('price_unverified');
});
