/**
 * Dollar caps on the real engine and the embedded chain (docs/pricing.md): SOL priced at $150 through the
 * localnet's Pyth account, a key with `usd.per_day: "30.00"` signs up to exactly $30 (fee included), and the next
 * sign is refused `usd_per_day_cap` with nothing sent; each intent records its dollar value, so a price that moves
 * later does not change what the earlier signs count; a stale price refuses `price_stale`, nothing sent. A key
 * that spends SOL and a test token under one daily dollar cap reaches it exactly across both, and a cent more refuses.
 */
import { address } from '@solana/addresses';
import type { PricesConfig } from '../../src/config/types';
import type { AuditEntry } from '../../src/ledger/types';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { payload, randomAddress } from '../support/payloads';
import { setMint, setTokenAccount, tokenBalance, transferChecked } from '../support/tokens';
import { balanceOf, makeWorld, type World } from '../support/world';
import { dollars, PRICE_BOUNDS, setSolPrice } from '../support/prices';

const FEE = 5000;
const SOL = KNOWN_FEEDS['SOL/USD'];
/** A test token of 6 decimals with a price account of its own. */
const MINT = randomAddress();
const MINT_PRICE = { account: randomAddress(), feedId: 'cd'.repeat(32) };
const prices: PricesConfig = {
  bounds: PRICE_BOUNDS,
  feeds: new Map([
    ['SOL', { label: 'SOL', account: SOL.sponsoredAccount, feedId: SOL.feedId }],
    [MINT, { label: MINT, account: address(MINT_PRICE.account), feedId: MINT_PRICE.feedId }],
  ]),
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
      mixed: {
        usd: usd('20.00'),
        tokens: [
          {
            mint: MINT,
            program: 'spl-token',
            per_tx: null,
            per_day: 1_000_000_000n,
            destinations: null,
            per_destination_per_day: null,
            approve_above: null,
          },
        ],
      },
    },
    prices,
  });
  setMint(w.localnet, MINT, { decimals: 6 });
});
afterAll(() => w.close());

/** 0.1 SOL out of the key, fee included: $15.00 at $150. */
const FIFTEEN_DOLLARS = 100_000_000 - FEE;

const sign = (key: string, lamports: number) =>
  w.engine.sign({ key, payload: w.transfer(key, lamports), principal: w.operator, mode: 'send' });

test('signs up to exactly $30 a day pass; one more is refused usd_per_day_cap and nothing is sent', async () => {
  setSolPrice(w.localnet, '150');
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
});

test('a price that moves after a sign does not change what that sign counts', async () => {
  setSolPrice(w.localnet, '150');
  expect(await sign('moved', FIFTEEN_DOLLARS)).toMatchObject({ outcome: 'confirmed', usd_value: '15.00' });
  setSolPrice(w.localnet, '300');
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
  setSolPrice(w.localnet, '150', 61);
  const balance = await balanceOf(w, w.keys.stale!.pubkey);
  const report = await sign('stale', 1_000_000);
  expect(report).toMatchObject({ outcome: 'refused', failed_check: 'price', reason: 'price_stale', signature: null });
  expect(report.figures).toMatchObject({ max_age_s: 60 });
  expect(await balanceOf(w, w.keys.stale!.pubkey)).toBe(balance);
  expect((await w.ledger.keyUsage('stale', Math.floor(Date.now() / 1000))).usdMicros).toBe(0n);
});

test('a key without usd caps is not priced: a stale price refuses nothing and reports no dollars', async () => {
  setSolPrice(w.localnet, '150', 61);
  expect(await sign('plain', 1_000_000)).toMatchObject({
    outcome: 'confirmed',
    usd_value: null,
    remaining_daily_usd: null,
  });
});

test('usd.per_tx refuses a transaction worth more in one go; usd.approve_above decides approval for a confirm key', async () => {
  setSolPrice(w.localnet, '150');
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

test("across SOL and a token in one day: the cap exactly passes, a cent more refuses; a later price leaves the first sign's usage", async () => {
  const key = w.keys.mixed!;
  const source = setTokenAccount(w.localnet, { mint: MINT, owner: key.pubkey, amount: 100_000_000n });
  const merchant = setTokenAccount(w.localnet, { mint: MINT, owner: randomAddress(), amount: 0n });
  const pay = (amount: bigint) =>
    w.engine.sign({
      key: 'mixed',
      payload: payload(key.pubkey, [
        transferChecked({ source, mint: MINT, destination: merchant, owner: key.pubkey }, amount, 6),
      ]),
      principal: w.operator,
      mode: 'send',
    });
  const usage = async () => (await w.ledger.keyUsage('mixed', Math.floor(Date.now() / 1000))).usdMicros;
  setSolPrice(w.localnet, '150');
  w.localnet.setPrice({ ...MINT_PRICE, price: '1.00', conf: '0', ageS: 0 });

  const first = await sign('mixed', FIFTEEN_DOLLARS);
  expect(first).toMatchObject({ outcome: 'confirmed', usd_value: '15.00', remaining_daily_usd: '5.00' });
  // SOL doubles before the next sign: what the first counts stays the $15.00 its intent recorded at $150.
  setSolPrice(w.localnet, '300');
  expect(await usage()).toBe(15_000_000n);
  let intent: AuditEntry | undefined;
  for await (const e of w.ledger.entries())
    if (e.signature === first.signature && e.command === 'sign-intent') intent = e;
  expect(intent).toMatchObject({ usd_micros: '15000000' });
  expect(intent?.usd_prices).toEqual([expect.objectContaining({ asset: 'SOL', price: '15000000000' })]);

  // The token sign pays its fee in SOL, now $0.0015 at $300: 4.9985 tokens at $1.00 bring the day to $20.00.
  const overBy = 10_000n; // one cent of the token
  const over = await pay(4_998_500n + overBy);
  expect(over).toMatchObject({
    outcome: 'refused',
    failed_check: 'limits',
    reason: 'usd_per_day_cap',
    signature: null,
    figures: { usd_spent: '15.00', usd_requested: '5.01', usd_cap: '20.00' },
  });
  expect(await tokenBalance(w.localnet.url, merchant)).toBe(0n);

  const exact = await pay(4_998_500n);
  expect(exact).toMatchObject({ outcome: 'confirmed', usd_value: '5.00', remaining_daily_usd: '0.00' });
  expect(await tokenBalance(w.localnet.url, merchant)).toBe(4_998_500n);
  expect(await usage()).toBe(20_000_000n);
});
