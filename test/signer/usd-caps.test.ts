/**
 * Dollar caps on the real engine and the embedded chain (docs/pricing.md): SOL priced at $150 through the
 * localnet's Pyth account, a key with `usd.per_day: "30.00"` signs up to exactly $30 (fee included), and the next
 * sign is refused `usd_per_day_cap` with nothing sent; each intent records its dollar value (and the final entry
 * repeats it, with the price, confidence, exponent, publish time and account it came from), so a price that moves
 * later does not change what the earlier signs count; a stale price refuses `price_stale`, nothing sent.
 */
import type { PricesConfig } from '../../src/config/types';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { parseUsd } from '../../src/util/usd-amounts';
import { balanceOf, makeWorld, type World } from '../support/world';

const FEE = 5000;
const SOL = KNOWN_FEEDS['SOL/USD'];
const prices: PricesConfig = {
  bounds: { maxAgeS: 60, maxConfidenceBps: 100, allowPartial: false },
  feeds: new Map([['SOL', { label: 'SOL', account: SOL.sponsoredAccount, feedId: SOL.feedId }]]),
};
const dollars = (text: string): bigint => {
  const parsed = parseUsd(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.micros;
};
const usd = (perDay: string) => ({ per_tx: null, per_day: dollars(perDay), approve_above: null });

let w: World;

beforeAll(async () => {
  w = await makeWorld({
    keys: {
      daily: { usd: usd('30.00') },
      stale: { usd: usd('30.00') },
      moved: { usd: usd('30.00') },
      pertx: { usd: { per_tx: dollars('10.00'), per_day: null, approve_above: null } },
      gated: { approval: 'confirm', usd: { per_tx: null, per_day: null, approve_above: dollars('10.00') } },
      plain: {},
    },
    prices,
  });
});
afterAll(() => w.close());

const setSol = (price: string, ageS = 0) =>
  w.localnet.setPrice({ account: SOL.sponsoredAccount, feedId: SOL.feedId, price, conf: '0', ageS });

/** 0.1 SOL out of the key, fee included: $15.00 at $150. */
const FIFTEEN_DOLLARS = 100_000_000 - FEE;

const sign = (key: string, lamports: number) =>
  w.engine.sign({ key, payload: w.transfer(key, lamports), principal: w.operator, mode: 'send' });

test('signs up to exactly $30 a day pass; one more is refused usd_per_day_cap and nothing is sent', async () => {
  setSol('150');
  const checked = await w.engine.check({
    key: 'daily',
    payload: w.transfer('daily', FIFTEEN_DOLLARS),
    principal: w.operator,
  });
  expect(checked).toMatchObject({ outcome: 'ok', usd_value: '15.00', remaining_daily_usd: '15.00' });

  const first = await sign('daily', FIFTEEN_DOLLARS);
  expect(first).toMatchObject({ outcome: 'confirmed', usd_value: '15.00', remaining_daily_usd: '15.00' });
  const second = await sign('daily', FIFTEEN_DOLLARS);
  expect(second).toMatchObject({ outcome: 'confirmed', usd_value: '15.00', remaining_daily_usd: '0.00' });
  // key_show tells an agent the same before it tries.
  const [shown] = await w.engine.keyShow({ key: 'daily', principal: w.operator });
  expect(shown?.policy.usd).toEqual({
    per_tx: null,
    per_day: '30.00',
    approve_above: null,
    spent_or_reserved_24h: '30.00',
    remaining_daily: '0.00',
  });

  const balance = await balanceOf(w, w.keys.daily!.pubkey);
  const third = await sign('daily', 1); // 5001 lamports at $150: $0.00075015, rounded up to the micro-dollar
  expect(third).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'usd_per_day_cap',
    signature: null,
    figures: { usd_spent: '30.00', usd_requested: '0.000751', usd_cap: '30.00' },
  });
  expect(await balanceOf(w, w.keys.daily!.pubkey)).toBe(balance);
  const usage = await w.ledger.keyUsage('daily', Math.floor(Date.now() / 1000));
  expect(usage.usdMicros).toBe(30_000_000n);
  // The intent and the final entry of each sign record its value and the price it came from: the account, price,
  // confidence, exponent and publish time of the Pyth account read with its simulation.
  const entries = (await w.ledger.tail(50)).filter((e) => e.key === 'daily' && e.signature === first.signature);
  expect(entries.map((e) => e.command)).toEqual(['sign-intent', 'sign']);
  for (const e of entries) {
    expect(e.usd_micros).toBe('15000000');
    expect(e.usd_prices).toEqual([
      {
        asset: 'SOL',
        amount: String(FIFTEEN_DOLLARS + FEE),
        decimals: 9,
        usd_micros: '15000000',
        account: SOL.sponsoredAccount,
        price: '15000000000',
        conf: '0',
        exponent: -8,
        publish_time: expect.any(Number) as number,
      },
    ]);
  }
  expect(await w.ledger.verify()).toMatchObject({ ok: true });
});

test('a price that moves after a sign does not change what that sign counts', async () => {
  setSol('150');
  expect(await sign('moved', FIFTEEN_DOLLARS)).toMatchObject({ outcome: 'confirmed', usd_value: '15.00' });
  setSol('300');
  const now = Math.floor(Date.now() / 1000);
  expect((await w.ledger.keyUsage('moved', now)).usdMicros).toBe(15_000_000n);
  // At $300 the same 0.1 SOL is worth $30: with the $15 recorded at $150, it would pass the $30 cap.
  const again = await w.engine.check({
    key: 'moved',
    payload: w.transfer('moved', FIFTEEN_DOLLARS),
    principal: w.operator,
  });
  expect(again).toMatchObject({
    outcome: 'refused',
    reason: 'usd_per_day_cap',
    figures: { usd_spent: '15.00', usd_requested: '30.00' },
  });
});

test("a price older than max_age_s on the chain's clock refuses price_stale, nothing sent", async () => {
  setSol('150', 61);
  const balance = await balanceOf(w, w.keys.stale!.pubkey);
  const report = await sign('stale', 1_000_000);
  expect(report).toMatchObject({ outcome: 'refused', failed_check: 'price', reason: 'price_stale', signature: null });
  expect(report.figures).toMatchObject({ max_age_s: 60 });
  expect(await balanceOf(w, w.keys.stale!.pubkey)).toBe(balance);
  expect((await w.ledger.keyUsage('stale', Math.floor(Date.now() / 1000))).usdMicros).toBe(0n);
});

test('a key without usd caps is not priced: a stale price refuses nothing and reports no dollars', async () => {
  setSol('150', 61);
  expect(await sign('plain', 1_000_000)).toMatchObject({
    outcome: 'confirmed',
    usd_value: null,
    remaining_daily_usd: null,
  });
});

test('usd.per_tx refuses a transaction worth more in one go; usd.approve_above decides approval for a confirm key', async () => {
  setSol('150');
  const check = (key: string, lamports: number) =>
    w.engine.check({ key, payload: w.transfer(key, lamports), principal: w.operator });
  expect(await check('pertx', FIFTEEN_DOLLARS)).toMatchObject({
    outcome: 'refused',
    reason: 'usd_per_tx_cap',
    figures: { usd_requested: '15.00', usd_cap: '10.00' },
  });
  expect(await check('pertx', FIFTEEN_DOLLARS / 2 - FEE / 2)).toMatchObject({ outcome: 'ok', usd_value: '7.50' });
  // Without a lamport threshold every spend of a confirm key needs an operator; the dollar threshold decides instead.
  expect(await check('gated', FIFTEEN_DOLLARS / 2 - FEE / 2)).toMatchObject({
    outcome: 'ok',
    would_need_approval: false,
  });
  expect(await check('gated', FIFTEEN_DOLLARS)).toMatchObject({ outcome: 'ok', would_need_approval: true });
});
