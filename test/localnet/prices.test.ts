/**
 * Prices on the embedded chain, read as the signer reads them: `localnet_setPrice` over the real JSON-RPC endpoint
 * writes a PriceUpdateV2 account owned by the Pyth receiver, and one getMultipleAccounts returns it with the Clock
 * sysvar, whose time follows the host's, so a price's age is real and the checks judge it as on a cluster; a chain
 * started with livePrices (npm start's) publishes a price given with age 0 again as its clock moves.
 */
import { address, createSolanaRpc, getBase64Encoder, type Address } from '@solana/kit';
import { getSysvarClockDecoder, SYSVAR_CLOCK_ADDRESS } from '@solana/sysvars';
import { EmbeddedChain } from '../../src/localnet/embedded-chain';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { KNOWN_FEEDS } from '../../src/pricing/feeds';
import { checkPrice, type PriceCheck } from '../../src/pricing/price-check';
import { decodePriceUpdateV2, PYTH_RECEIVER_PROGRAM } from '../../src/pricing/price-update';

const SOL = KNOWN_FEEDS['SOL/USD'];
const bounds = { maxAgeS: 60, maxConfidenceBps: 100, allowPartial: false };

let net: Localnet;
beforeAll(async () => {
  net = await startLocalnet({ blockIntervalMs: 0 });
});
afterAll(() => net.close());

async function call(method: string, params: unknown[]): Promise<{ result?: unknown; error?: { message: string } }> {
  const res = await fetch(net.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { message: string } };
}

/** The price account and the clock in one request, judged as the signer judges them. */
async function readAndCheck(account: Address): Promise<{ check: PriceCheck; clock: bigint }> {
  const rpc = createSolanaRpc(net.url);
  const { value } = await rpc
    .getMultipleAccounts([account, SYSVAR_CLOCK_ADDRESS], { encoding: 'base64', commitment: 'confirmed' })
    .send();
  const [price, clockAccount] = value;
  const clock = getSysvarClockDecoder().decode(getBase64Encoder().encode(clockAccount!.data[0]));
  const read = price ? { owner: price.owner, data: getBase64Encoder().encode(price.data[0]) } : null;
  return {
    check: checkPrice({ label: 'SOL', account, feedId: SOL.feedId }, bounds, read, clock.unixTimestamp),
    clock: clock.unixTimestamp,
  };
}

test("the chain's clock is the host's time", () => {
  const host = BigInt(Math.floor(Date.now() / 1000));
  const clock = net.clockTime();
  expect(clock <= host && clock >= host - 2n).toBe(true);
});

test("the chain's clock moves to the host's time at each block, not between blocks", () => {
  let now = 1_765_000_000_000;
  const chain = new EmbeddedChain({ confirmAfterBlocks: 1, finalizeAfterBlocks: 2 }, () => now);
  expect(chain.clockTime).toBe(1_765_000_000n);
  now += 61_000;
  expect(chain.clockTime).toBe(1_765_000_000n);
  chain.advanceBlocks(1);
  expect(chain.clockTime).toBe(1_765_000_061n);
});

test('localnet_setPrice writes a price the checks accept, at age 0 on the chain’s clock', async () => {
  const set = await call('localnet_setPrice', [
    { account: SOL.sponsoredAccount, feed_id: `0x${SOL.feedId}`, price: '150.25', conf: '0.05' },
  ]);
  expect(set.result).toEqual({
    account: SOL.sponsoredAccount,
    feed_id: SOL.feedId,
    price: '150.25',
    conf: '0.05',
    exponent: -8,
    publish_time: Number(net.clockTime()),
    clock_time: Number(net.clockTime()),
  });
  const { check } = await readAndCheck(SOL.sponsoredAccount);
  expect(check.ok && { price: check.price.price, conf: check.price.conf, age: check.price.ageS }).toEqual({
    price: 15_025_000_000n,
    conf: 5_000_000n,
    age: 0n,
  });
});

test('a price set 61 s back is stale under a 60 s bound; 60 s back is not', async () => {
  await call('localnet_setPrice', [
    { account: SOL.sponsoredAccount, feed_id: SOL.feedId, price: '150.25', conf: '0.05', age_s: 60 },
  ]);
  expect((await readAndCheck(SOL.sponsoredAccount)).check.ok).toBe(true);
  await call('localnet_setPrice', [
    { account: SOL.sponsoredAccount, feed_id: SOL.feedId, price: '150.25', conf: '0.05', age_s: 61 },
  ]);
  const { check, clock } = await readAndCheck(SOL.sponsoredAccount);
  expect(check.ok || check.refusal).toMatchObject({
    reason: 'price_stale',
    figures: { age_s: 61, max_age_s: 60, clock_time: Number(clock) },
  });
});

test('an impostor owner and partial verification are written as asked, and refused', async () => {
  const impostor = address('4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv');
  await call('localnet_setPrice', [
    { account: impostor, feed_id: SOL.feedId, price: '1', conf: '0', owner: '11111111111111111111111111111111' },
  ]);
  expect((await readAndCheck(impostor)).check).toMatchObject({ ok: false, refusal: { reason: 'price_unverified' } });
  await call('localnet_setPrice', [
    { account: impostor, feed_id: SOL.feedId, price: '1', conf: '0', partial_signatures: 5 },
  ]);
  const { check } = await readAndCheck(impostor);
  expect(check.ok || check.refusal.figures).toMatchObject({ verification: 'Partial (5 signatures)' });
});

test('the account is in the receiver’s layout and size, owned by the receiver', async () => {
  const rpc = createSolanaRpc(net.url);
  const { value } = await rpc.getAccountInfo(SOL.sponsoredAccount, { encoding: 'base64' }).send();
  expect(value?.owner).toBe(PYTH_RECEIVER_PROGRAM);
  const data = getBase64Encoder().encode(value!.data[0]);
  expect(data.length).toBe(134);
  expect(decodePriceUpdateV2(data).ok).toBe(true);
});

test('a price with more than 8 decimals or a bad feed id is refused with the form to use', async () => {
  const tooFine = await call('localnet_setPrice', [
    { account: SOL.sponsoredAccount, feed_id: SOL.feedId, price: '1.000000001', conf: '0' },
  ]);
  expect(tooFine.error?.message).toMatch(/at most 8 decimals/);
  const badFeed = await call('localnet_setPrice', [
    { account: SOL.sponsoredAccount, feed_id: 'abc', price: '1', conf: '0' },
  ]);
  expect(badFeed.error?.message).toMatch(/feed_id must be 64 hex digits/);
});

describe('a chain that keeps its prices fresh (npm start)', () => {
  let live: Localnet;
  beforeAll(async () => {
    live = await startLocalnet({
      blockIntervalMs: 50,
      livePrices: [{ account: SOL.sponsoredAccount, feedId: SOL.feedId, price: '150', conf: '0' }],
    });
  });
  afterAll(() => live.close());

  /** The SOL account's price and publish time as the chain holds it now. */
  async function solNow(): Promise<{ price: bigint; publishTime: bigint }> {
    const rpc = createSolanaRpc(live.url);
    const { value } = await rpc.getAccountInfo(SOL.sponsoredAccount, { encoding: 'base64' }).send();
    const decoded = decodePriceUpdateV2(getBase64Encoder().encode(value!.data[0]));
    if (!decoded.ok) throw new Error('the SOL account is not a PriceUpdateV2');
    const m = decoded.update.priceMessage;
    return { price: m.price, publishTime: m.publishTime };
  }

  /** Waits until the chain's clock has moved past `t` and a block after it was made. */
  async function clockPast(t: bigint): Promise<void> {
    const until = Date.now() + 5000;
    while (live.clockTime() <= t + 1n) {
      if (Date.now() > until) throw new Error('the chain clock did not move');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  test('a price given with age 0 is published again as the clock moves, at its figures, including a new one set over JSON-RPC', async () => {
    const start = await solNow();
    expect(start.price).toBe(15_000_000_000n);
    await clockPast(start.publishTime);
    const later = await solNow();
    expect(later.publishTime).toBeGreaterThan(start.publishTime);
    expect(later.price).toBe(start.price);
    // `localnet price set SOL 100`: the new price is the one kept fresh.
    const set = await fetch(live.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'localnet_setPrice',
        params: [{ account: SOL.sponsoredAccount, feed_id: SOL.feedId, price: '100', conf: '0' }],
      }),
    });
    const { result } = (await set.json()) as { result: { publish_time: number } };
    await clockPast(BigInt(result.publish_time));
    expect(await solNow()).toEqual({ price: 10_000_000_000n, publishTime: expect.any(BigInt) as bigint });
    expect((await solNow()).publishTime).toBeGreaterThan(BigInt(result.publish_time));
  });

  test('a price given with an age stays as written: a feed that stopped, so it goes stale', async () => {
    const written = live.setPrice({
      account: SOL.sponsoredAccount,
      feedId: SOL.feedId,
      price: '150',
      conf: '0',
      ageS: 61,
    });
    await clockPast(BigInt(written.clock_time));
    expect((await solNow()).publishTime).toBe(BigInt(written.publish_time));
  });
});
