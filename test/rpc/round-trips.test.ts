/**
 * How many HTTP requests a sign sends before its send: one in the common case (payload v1; payload v2 without
 * lookup tables or with tables read before), two when a table must be read first. Counted twice: by the RPC
 * client's per-operation count (src/rpc/request-count.ts) and by a JSON-RPC proxy in front of the embedded chain
 * that sees every HTTP request, so the count the bench prints is the one the network sees.
 */
import { address, createSolanaRpc } from '@solana/kit';
import { countRequests, type RequestTally } from '../../src/rpc/request-count';
import type { Report } from '../../src/signer/report';
import { FaultProxy } from '../abuse/support/fault-proxy';
import { randomAddress } from '../support/payloads';
import { makeWorld, type World } from '../support/world';
import { createLookupTable, fundedSigner, latestLifetime, transfer, wireTransaction } from '../signer/kit-transactions';

let w: World;
let proxy: FaultProxy;
let table: string;
/** The methods of every HTTP request the proxy passed on, in order. */
let seen: string[][] = [];

/**
 * What the watcher of earlier sign-only transactions polls with, in the background: a request carrying only these
 * is not one a sign makes before its send.
 */
const WATCHER_METHODS = new Set([
  'getSignatureStatuses',
  'getBlockHeight',
  'getTransaction',
  'getSignaturesForAddress',
]);
const ownRequests = (requests: string[][]): string[][] =>
  requests.filter((r) => !r.every((m) => WATCHER_METHODS.has(m)));

beforeAll(async () => {
  proxy = await FaultProxy.start();
  w = await makeWorld({ keys: { alpha: {} }, rpcUrl: (url) => (proxy.setTarget(url), proxy.url()) });
  const payer = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  table = await createLookupTable(createSolanaRpc(w.localnet.url), payer, [w.keys.alpha!.destination]);
  // The first sign of a process asks for the genesis and a blockhash; the ones counted below reuse them.
  const first = await w.engine.check({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
  expect(first.outcome).toBe('ok');
});

afterAll(async () => {
  await w.close();
  await proxy.close();
});

beforeEach(() => {
  seen = [];
  proxy.beforeForward = (calls) => {
    seen.push(calls.map((c) => c.method));
    return Promise.resolve();
  };
});

afterEach(() => proxy.reset());

/** Runs `op`, returning its report, the client's count, and the requests the proxy saw meanwhile. */
async function counted(
  op: () => Promise<Report>,
): Promise<{ report: Report; tally: RequestTally; proxied: string[][] }> {
  seen = [];
  const { result, tally } = await countRequests(op);
  return { report: result, tally, proxied: ownRequests(seen) };
}

/** The requests the proxy saw up to the first one carrying sendTransaction (all of them when none did). */
const beforeSend = (requests: string[][]): string[][] => {
  const at = requests.findIndex((r) => r.includes('sendTransaction'));
  return at < 0 ? requests : requests.slice(0, at);
};

const v2 = (transaction: string) => ({ version: 2, transaction, summary: 'kit transfer', warnings: [] });

describe('round trips before the send', () => {
  it('payload v1 sign_only: one request, carrying the simulation', async () => {
    const { report, tally, proxied } = await counted(() =>
      w.engine.sign({ payload: w.transfer('alpha', 1_000_001), mode: 'sign_only', principal: w.operator }),
    );
    expect(report.outcome).toBe('signed');
    expect(tally.requests).toBe(1);
    expect(tally.beforeSend).toBeNull();
    expect(proxied).toHaveLength(1);
    expect(proxied[0]).toContain('simulateTransaction');
    expect(proxied[0]).toContain('getGenesisHash');
  });

  it('payload v1 sign (send): one request before the send', async () => {
    const { report, tally, proxied } = await counted(() =>
      w.engine.sign({ payload: w.transfer('alpha', 1_000_002), principal: w.operator }),
    );
    expect(report.outcome).toBe('confirmed');
    expect(tally.beforeSend).toBe(1);
    expect(beforeSend(proxied)).toHaveLength(1);
  });

  it('payload v1 check: one request', async () => {
    const { report, tally, proxied } = await counted(() =>
      w.engine.check({ payload: w.transfer('alpha', 1_000_003), principal: w.operator }),
    );
    expect(report.outcome).toBe('ok');
    expect(tally.requests).toBe(1);
    expect(proxied).toHaveLength(1);
  });

  it("payload v2 on the agent's blockhash, no tables: one request (its validity read in the simulation's)", async () => {
    const key = w.keys.alpha!;
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 1_000_004)], {
      version: 'legacy',
      lifetime: await latestLifetime(createSolanaRpc(w.localnet.url)),
    });
    const { report, tally, proxied } = await counted(() =>
      w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator }),
    );
    expect(report.outcome).toBe('signed');
    expect(tally.requests).toBe(1);
    expect(proxied).toEqual([expect.arrayContaining(['simulateTransaction', 'isBlockhashValid'])]);
  });

  it('payload v2 with a lookup table: two requests the first time, one once the table is kept', async () => {
    const key = w.keys.alpha!;
    const build = async (amount: number) =>
      wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, amount)], {
        tables: { [table]: [address(key.destination), address(randomAddress())] },
        lifetime: await latestLifetime(createSolanaRpc(w.localnet.url)),
      });
    const first = await counted(async () =>
      w.engine.sign({ payload: v2(await build(1_000_005)), mode: 'sign_only', principal: w.operator }),
    );
    expect(first.report.outcome).toBe('signed');
    expect(first.report.checks).toContain('lookup_tables');
    // The blockhash fetch of the build above is the test's own client, not the signer's.
    expect(first.tally.requests).toBe(2);
    const tx = await build(1_000_006);
    const again = await counted(() => w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator }));
    expect(again.report.outcome).toBe('signed');
    expect(again.tally.requests).toBe(1);
    expect(again.proxied).toHaveLength(1);
  });

  it('the same payload signed twice is built on a fresh blockhash the second time: one more request', async () => {
    const payload = w.transfer('alpha', 1_000_007);
    const first = await counted(() => w.engine.sign({ payload, mode: 'sign_only', principal: w.operator }));
    const second = await counted(() => w.engine.sign({ payload, mode: 'sign_only', principal: w.operator }));
    expect(first.report.outcome).toBe('signed');
    expect(second.report.outcome).toBe('signed');
    expect(first.tally.requests).toBe(1);
    expect(second.report.signature).not.toBe(first.report.signature);
    // On a slow machine the held blockhash may pass its refresh age during the first sign, and the newer one
    // rides in that sign's batch: the second is then already on a blockhash it was never built on, one request.
    // Otherwise the second asks for a fresh blockhash first, one request more.
    const refreshedByFirst = first.proxied.some((r) => r.includes('getLatestBlockhash'));
    if (refreshedByFirst) {
      expect(second.tally.requests).toBe(1);
    } else {
      expect(second.tally.requests).toBe(2);
      expect(second.proxied[0]).toEqual(['getLatestBlockhash']);
    }
  });
});
