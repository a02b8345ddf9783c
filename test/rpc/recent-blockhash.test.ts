/**
 * The blockhash kept between signs: reused while young, refreshed in the background once older, fetched afresh
 * when too old or when the chain no longer knows it, and a message built twice on it is told apart. Against the
 * real embedded chain (blocks only when the test makes them), with a clock the test moves.
 */
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { countRequests } from '../../src/rpc/request-count';
import { RecentBlockhash } from '../../src/rpc/recent-blockhash';
import { JsonRpcClient } from '../../src/rpc/rpc-client';

let localnet: Localnet;
let chain: JsonRpcClient;
let now = 0;
let recent: RecentBlockhash;

beforeAll(async () => {
  localnet = await startLocalnet({ blockIntervalMs: 0 });
  chain = new JsonRpcClient(localnet.url, { timeoutMs: 2_000 });
});
afterAll(async () => {
  chain.close();
  await localnet.close();
});
beforeEach(() => {
  now = 1_000_000;
  recent = new RecentBlockhash(chain, { refreshAfterMs: 2_000, reuseForMs: 10_000, now: () => now });
});

const fetches = (): number => localnet.stats().calls.getLatestBlockhash ?? 0;

describe('the recent blockhash', () => {
  it('is fetched once, then reused without a request while younger than reuseForMs', async () => {
    const before = fetches();
    const first = await recent.get();
    localnet.advanceBlocks(1);
    now += 9_999;
    const { result: again, tally } = await countRequests(() => recent.get());
    expect(again).toEqual(first);
    expect(tally.requests).toBe(0);
    expect(fetches() - before).toBe(1);
  });

  it('older than reuseForMs, a sign waits for a fresh one', async () => {
    const first = await recent.get();
    localnet.advanceBlocks(1);
    now += 10_000;
    const fresh = await recent.get();
    expect(fresh.blockhash).not.toBe(first.blockhash);
  });

  it('older than refreshAfterMs, refreshIfStale replaces it in the background; younger, it asks nothing', async () => {
    const first = await recent.get();
    localnet.advanceBlocks(1);
    const before = fetches();
    now += 1_999;
    expect(recent.refreshIfStale()).toBeNull();
    expect(fetches()).toBe(before);
    now += 1;
    const refreshing = recent.refreshIfStale();
    expect(refreshing).not.toBeNull();
    // The held one is still served while the refresh runs; the refreshed one once it has answered.
    expect(await recent.get()).toEqual(first);
    await refreshing;
    expect((await recent.get()).blockhash).not.toBe(first.blockhash);
    expect(fetches() - before).toBe(1);
  });

  it('on a chain seen making a block every 2 ms, is reused only for a sixth of its 300 ms life', async () => {
    await recent.get();
    localnet.advanceBlocks(1_000);
    now += 2_000;
    await recent.fresh();
    // 1,000 blocks in 2 s: a blockhash lives 150 blocks, 300 ms; the 10 s window becomes 50 ms.
    now += 49;
    expect((await countRequests(() => recent.get())).tally.requests).toBe(0);
    now += 2;
    expect((await countRequests(() => recent.get())).tally.requests).toBe(1);
  });

  it('a blockhash the chain no longer knows is never reused', async () => {
    const first = await recent.get();
    localnet.advanceBlocks(1);
    recent.forget(first.blockhash);
    expect((await recent.get()).blockhash).not.toBe(first.blockhash);
  });

  it('tells a message built a second time on the held blockhash apart', async () => {
    const { blockhash } = await recent.get();
    const message = Uint8Array.from([1, 2, 3]);
    expect(recent.firstUse(blockhash, message)).toBe(true);
    expect(recent.firstUse(blockhash, Uint8Array.from([1, 2, 4]))).toBe(true);
    expect(recent.firstUse(blockhash, message)).toBe(false);
    // On a blockhash it does not hold, nothing is a repeat of a kept one.
    expect(recent.firstUse('11111111111111111111111111111111', message)).toBe(true);
  });
});
