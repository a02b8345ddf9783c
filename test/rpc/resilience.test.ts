/**
 * The chain client against the faults real providers inflict, staged by the fault proxy in front of the real
 * localnet: 429 with and without Retry-After (seconds and HTTP date), 5xx, timeouts, connections reset and
 * refused, a dead first endpoint failing over to the second, and calls that are not idempotent sent once.
 * Jitter is pinned (`random`) so every wait the client chooses can be asserted exactly.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { JsonRpcClient, RpcError, type JsonRpcClientOptions } from '../../src/rpc/rpc-client';
import { DEFAULT_RETRY, type RetryEvent } from '../../src/rpc/resilient-rpc';
import { meetsCommitment } from '../../src/rpc/commitment';
import { chainClientFor } from '../../src/rpc/for-cluster';
import { DEFAULT_TIMINGS } from '../../src/config/types';
import { localCluster } from '../../src/config/clusters';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { FaultProxy, type FaultRule } from '../abuse/support/fault-proxy';
import { newSigner, randomAddress, signedTransfer } from '../localnet/legacy-tx';

let localnet: Localnet;
const proxies: FaultProxy[] = [];
const clients: JsonRpcClient[] = [];

beforeAll(async () => {
  localnet = await startLocalnet({ blockIntervalMs: 0 });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
afterAll(() => localnet.close());

async function proxy(...rules: FaultRule[]): Promise<FaultProxy> {
  const p = await FaultProxy.start(localnet.url);
  for (const r of rules) p.add(r);
  proxies.push(p);
  return p;
}

/** A client with pinned jitter that records each retry it decides on. */
function client(urls: string | string[], opts: Partial<JsonRpcClientOptions> = {}) {
  const retries: RetryEvent[] = [];
  const c = new JsonRpcClient(urls, {
    timeoutMs: 2000,
    random: () => 0.5,
    retry: { ...DEFAULT_RETRY, backoff: { baseMs: 40, maxMs: 1000 } },
    onRetry: (e) => retries.push(e),
    ...opts,
  });
  clients.push(c);
  return { c, retries };
}

async function rejection(p: Promise<unknown>): Promise<RpcError> {
  const [first] = await Promise.allSettled([p]);
  if (first.status !== 'rejected') throw new Error('expected the call to fail');
  expect(first.reason).toBeInstanceOf(RpcError);
  return first.reason as RpcError;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

const timed = async <T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = Date.now();
  const value = await f();
  return { value, ms: Date.now() - started };
};

describe('429 Too Many Requests', () => {
  test('with Retry-After in seconds: waits exactly that long, then gets the answer', async () => {
    const p = await proxy({ kind: 'http429', method: 'getGenesisHash', times: 1, retryAfter: '1' });
    const { c, retries } = client(p.url());
    const { value, ms } = await timed(() => c.getGenesisHash());
    expect(value).toBe(localnet.genesisHash);
    expect(retries.map((r) => [r.retry, r.waitMs, r.error.httpStatus])).toEqual([[1, expect.any(Number), 429]]);
    expect(retries[0]!.waitMs).toBeGreaterThan(900);
    expect(retries[0]!.waitMs).toBeLessThanOrEqual(1000);
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(p.calls['getGenesisHash']).toBe(2);
  });

  test('with Retry-After as an HTTP date: waits until then, up to the configured cap', async () => {
    const at = new Date(Date.now() + 3000).toUTCString();
    const p = await proxy({ kind: 'http429', method: 'getBlockHeight', times: 1, retryAfter: at });
    const { c, retries } = client(p.url(), { retry: { ...DEFAULT_RETRY, retryAfterMaxMs: 300 } });
    const { ms } = await timed(() => c.getBlockHeight('confirmed'));
    // The date is 2–3 s away (HTTP dates have whole seconds): the cap, not the backoff (20 ms here), decides.
    expect(retries.map((r) => r.waitMs)).toEqual([300]);
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(1500);
  });

  test('without Retry-After: exponential backoff with full jitter, then the answer', async () => {
    const p = await proxy({ kind: 'http429', method: 'getBlockHeight', times: 3, retryAfter: null });
    const { c, retries } = client(p.url());
    await c.getBlockHeight('confirmed');
    // random 0.5 of a ceiling of 40, 80, 160 ms.
    expect(retries.map((r) => r.waitMs)).toEqual([20, 40, 80]);
    expect(p.calls['getBlockHeight']).toBe(4);
  });

  test('a Retry-After past the caller deadline is not waited out: the 429 comes back at once', async () => {
    const p = await proxy({ kind: 'http429', method: 'getBlockHeight', retryAfter: '5' });
    const { c } = client(p.url());
    const { value: err, ms } = await timed(() =>
      rejection(c.getBlockHeight('confirmed', { deadlineAt: Date.now() + 500 })),
    );
    expect(err).toMatchObject({ kind: 'transport', httpStatus: 429, retryAfterMs: 5000 });
    expect(err.message).toBe(`getBlockHeight: http://127.0.0.1:${p.port} answered HTTP 429`);
    expect(ms).toBeLessThan(400);
    expect(p.calls['getBlockHeight']).toBe(1);
  });

  test('an abort during the wait ends the call at once as aborted', async () => {
    const p = await proxy({ kind: 'http429', method: 'getBlockHeight', retryAfter: '2' });
    const { c } = client(p.url());
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 100);
    const { value: err, ms } = await timed(() => rejection(c.getBlockHeight('confirmed', { signal: abort.signal })));
    expect(err).toMatchObject({ kind: 'aborted', message: 'getBlockHeight: cancelled by the caller' });
    expect(ms).toBeLessThan(1000);
  });
});

describe('5xx, timeouts, connections reset and refused', () => {
  test('HTTP 500 twice, then the answer', async () => {
    const p = await proxy({ kind: 'http500', method: 'getBalance', times: 2 });
    const key = newSigner();
    localnet.airdrop(key.pubkey, 4_242_000_000);
    const { c, retries } = client(p.url());
    expect(await c.getBalance(key.pubkey)).toBe(4_242_000_000);
    expect(retries.map((r) => r.error.httpStatus)).toEqual([500, 500]);
  });

  test('HTTP 500 on every attempt: the last failure after 1 + retries attempts', async () => {
    const p = await proxy({ kind: 'http500', method: 'getBalance' });
    const { c } = client(p.url(), { retry: { ...DEFAULT_RETRY, retries: 2, backoff: { baseMs: 10, maxMs: 10 } } });
    const err = await rejection(c.getBalance(randomAddress()));
    expect(err).toMatchObject({ kind: 'transport', httpStatus: 500 });
    expect(p.calls['getBalance']).toBe(3);
  });

  test('a node that never answers: each attempt times out, the next one gets the answer', async () => {
    const p = await proxy({ kind: 'timeout', method: 'getGenesisHash', times: 1 });
    const { c, retries } = client(p.url(), { timeoutMs: 200 });
    const { value, ms } = await timed(() => c.getGenesisHash());
    expect(value).toBe(localnet.genesisHash);
    expect(retries.map((r) => r.error.kind)).toEqual(['timeout']);
    expect(ms).toBeGreaterThanOrEqual(190);
  });

  test('a connection reset before the node saw the call is retried', async () => {
    const p = await proxy({ kind: 'drop', method: 'getGenesisHash', times: 2 });
    const { c, retries } = client(p.url());
    expect(await c.getGenesisHash()).toBe(localnet.genesisHash);
    expect(retries).toHaveLength(2);
    expect(retries.every((r) => r.error.kind === 'transport' && r.error.httpStatus === undefined)).toBe(true);
  });

  test('a refused connection is retried, and its last failure names the endpoint only', async () => {
    const port = await closedPort();
    const { c, retries } = client(`http://u:pw@127.0.0.1:${port}/k/SECRET`);
    const err = await rejection(c.getGenesisHash());
    expect(err.message).toBe(`getGenesisHash: cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
    expect(retries).toHaveLength(DEFAULT_RETRY.retries);
  });

  test('a node error about the request is not retried', async () => {
    const p = await proxy();
    const { c, retries } = client(p.url());
    const err = await rejection(c.sendTransaction('AQ=='));
    expect(err).toMatchObject({ kind: 'node', rpcCode: -32602 });
    expect(retries).toEqual([]);
    expect(p.calls['sendTransaction']).toBe(1);
  });

  test('a node that reports itself unhealthy (-32005) is retried', async () => {
    const p = await proxy({ kind: 'rpcError', method: 'getGenesisHash', times: 1 });
    const { c, retries } = client(p.url());
    expect(await c.getGenesisHash()).toBe(localnet.genesisHash);
    expect(retries.map((r) => r.error.rpcCode)).toEqual([-32005]);
  });

  test('retries stop at the budget', async () => {
    const p = await proxy({ kind: 'http500', method: 'getGenesisHash' });
    const { c } = client(p.url(), {
      retry: { retries: 50, backoff: { baseMs: 100, maxMs: 100 }, retryAfterMaxMs: 0, budgetMs: 300 },
    });
    const { ms } = await timed(() => rejection(c.getGenesisHash()));
    expect(ms).toBeLessThan(1000);
    // Waits of 50 ms each within 300 ms: a handful of attempts, far fewer than 51.
    expect(p.calls['getGenesisHash']).toBeGreaterThan(2);
    expect(p.calls['getGenesisHash']).toBeLessThan(10);
  });
});

describe('sendTransaction: the same signed bytes are re-sent, and land once', () => {
  test('an answer lost after the node took the transaction: re-sent as is, one transfer', async () => {
    const from = newSigner();
    const to = randomAddress();
    localnet.airdrop(from.pubkey, 1_000_000_000);
    const p = await proxy({ kind: 'forwardThenDrop', method: 'sendTransaction', times: 1 });
    const { c } = client(p.url());
    const { blockhash } = await c.getLatestBlockhash();
    const tx = signedTransfer(from, to, 12_345_678, blockhash);
    expect(await c.sendTransaction(tx.base64)).toBe(tx.signature);
    expect(p.sends).toEqual([tx.base64, tx.base64]);
    expect(p.forwardedSends).toEqual([tx.base64, tx.base64]);
    expect(await c.getBalance(to)).toBe(12_345_678);
  });

  test('a 503 on the send: re-sent and landed', async () => {
    const from = newSigner();
    const to = randomAddress();
    localnet.airdrop(from.pubkey, 1_000_000_000);
    const p = await proxy({ kind: 'http500', method: 'sendTransaction', times: 1 });
    const { c } = client(p.url());
    const tx = signedTransfer(from, to, 5_000_000, (await c.getLatestBlockhash()).blockhash);
    expect(await c.sendTransaction(tx.base64)).toBe(tx.signature);
    expect(p.forwardedSends).toEqual([tx.base64]);
    expect(await c.getBalance(to)).toBe(5_000_000);
  });
});

describe('calls that are not idempotent are sent once', () => {
  test('requestAirdrop whose answer was lost is not repeated: the faucet paid once', async () => {
    const to = randomAddress();
    const p = await proxy({ kind: 'forwardThenDrop', method: 'requestAirdrop', times: 1 });
    const { c, retries } = client(p.url());
    await c.getGenesisHash(); // a pooled connection exists: the reset must not pass for a stale socket
    const err = await rejection(c.requestAirdrop(to, 777_000_000));
    expect(err.kind).toBe('transport');
    expect(retries).toEqual([]);
    expect(p.calls['requestAirdrop']).toBe(1);
    expect(await c.getBalance(to)).toBe(777_000_000);
  });

  test('requestAirdrop rate-limited (429) is not retried either', async () => {
    const p = await proxy({ kind: 'http429', method: 'requestAirdrop', times: 1 });
    const { c } = client(p.url());
    expect(await rejection(c.requestAirdrop(randomAddress(), 1_000_000_000))).toMatchObject({ httpStatus: 429 });
    expect(p.calls['requestAirdrop']).toBe(1);
  });
});

describe('several endpoints', () => {
  test('a dead first endpoint: the call fails over to the second, and later calls go there first', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const live = await proxy();
    const { c, retries } = client([dead, live.url()]);
    expect(c.endpointOrder()).toEqual([dead, live.url()]);
    expect(await c.getGenesisHash()).toBe(localnet.genesisHash);
    // Failing over to a healthy endpoint does not wait.
    expect(retries.map((r) => [r.failed, r.next, r.waitMs])).toEqual([[dead, live.url(), 0]]);
    expect(c.endpointOrder()).toEqual([live.url(), dead]);
    await c.getBlockHeight('confirmed');
    await c.getBalance(randomAddress());
    expect(retries).toHaveLength(1);
    expect(live.calls).toMatchObject({ getGenesisHash: 1, getBlockHeight: 1, getBalance: 1 });
  });

  test('a first endpoint that times out: the second answers, calls made together stay batched there', async () => {
    const slow = await proxy({ kind: 'timeout' });
    const live = await proxy();
    const { c } = client([slow.url(), live.url()], { timeoutMs: 200 });
    const key = newSigner();
    localnet.airdrop(key.pubkey, 3_000_000_000);
    const [balance, genesis] = await Promise.all([c.getBalance(key.pubkey), c.getGenesisHash()]);
    expect([balance, genesis]).toEqual([3_000_000_000, localnet.genesisHash]);
    expect(c.endpointOrder()[0]).toBe(live.url());
    // Next round: both calls go to the healthy endpoint in one request, the slow one is not touched.
    const before = { ...slow.calls };
    await Promise.all([c.getBlockHeight('confirmed'), c.getGenesisHash()]);
    expect(slow.calls).toEqual(before);
  });

  test('after its cool-down the first endpoint is preferred again; a success keeps it there', async () => {
    const first = await proxy({ kind: 'http500', times: 1 });
    const second = await proxy();
    const { c } = client([first.url(), second.url()], { cooldownMs: 150 });
    await c.getGenesisHash();
    expect(c.endpointOrder()).toEqual([second.url(), first.url()]);
    await new Promise((r) => setTimeout(r, 200));
    expect(c.endpointOrder()).toEqual([first.url(), second.url()]);
    await c.getGenesisHash();
    expect(first.calls['getGenesisHash']).toBe(2);
    expect(c.endpointOrder()).toEqual([first.url(), second.url()]);
  });

  test('a 429 with Retry-After keeps that endpoint behind the others for as long as it asked', async () => {
    const limited = await proxy({ kind: 'http429', times: 1, retryAfter: '2' });
    const other = await proxy();
    const { c } = client([limited.url(), other.url()], { cooldownMs: 10 });
    await c.getGenesisHash();
    await new Promise((r) => setTimeout(r, 50)); // past the cool-down, not past the Retry-After
    expect(c.endpointOrder()).toEqual([other.url(), limited.url()]);
  });

  test('every endpoint down: the last failure, after trying each', async () => {
    const a = await proxy({ kind: 'http500' });
    const b = await proxy({ kind: 'http500' });
    const { c } = client([a.url(), b.url()], {
      retry: { ...DEFAULT_RETRY, retries: 3, backoff: { baseMs: 10, maxMs: 10 } },
    });
    const err = await rejection(c.getGenesisHash());
    expect(err.httpStatus).toBe(500);
    expect((a.calls['getGenesisHash'] ?? 0) + (b.calls['getGenesisHash'] ?? 0)).toBe(4);
    expect(a.calls['getGenesisHash']).toBeGreaterThanOrEqual(1);
    expect(b.calls['getGenesisHash']).toBeGreaterThanOrEqual(1);
  });
});

describe('commitment', () => {
  test('a finalized client reads at finalized: a landed transaction is invisible until it is finalized', async () => {
    const from = newSigner();
    localnet.airdrop(from.pubkey, 1_000_000_000);
    const p = await proxy();
    const { c: finalized } = client(p.url(), { commitment: 'finalized' });
    const { c: confirmed } = client(p.url());
    expect([finalized.commitment, confirmed.commitment]).toEqual(['finalized', 'confirmed']);
    const tx = signedTransfer(from, randomAddress(), 1_000, (await finalized.getLatestBlockhash()).blockhash);
    await finalized.sendTransaction(tx.base64);
    localnet.advanceBlocks(1); // confirmed, not finalized
    const [status] = await finalized.getSignatureStatuses([tx.signature], { searchTransactionHistory: false });
    expect(status?.confirmationStatus).toBe('confirmed');
    expect(meetsCommitment(status?.confirmationStatus ?? null, 'finalized')).toBe(false);
    expect(meetsCommitment(status?.confirmationStatus ?? null, 'confirmed')).toBe(true);
    expect(await confirmed.getTransaction(tx.signature)).not.toBeNull();
    expect(await finalized.getTransaction(tx.signature)).toBeNull();
    localnet.advanceBlocks(1);
    expect(await finalized.getTransaction(tx.signature)).not.toBeNull();
  });

  test('chainClientFor takes the cluster endpoints, commitment and retry timings', async () => {
    const a = await proxy({ kind: 'http500', times: 1 });
    const b = await proxy();
    const cluster = {
      ...localCluster({ rpc_url: a.url(), game_programs: [], player_profile: null }),
      rpc_urls: [a.url(), b.url()],
      commitment: 'finalized' as const,
    };
    const c = chainClientFor(cluster, { ...DEFAULT_TIMINGS, rpc_timeout_ms: 500 });
    clients.push(c);
    expect(c.commitment).toBe('finalized');
    expect(c.endpoints).toEqual([a.url(), b.url()]);
    expect(await c.getGenesisHash()).toBe(localnet.genesisHash);
    expect(b.calls['getGenesisHash']).toBe(1);
    const once = chainClientFor(cluster, { ...DEFAULT_TIMINGS, rpc_retries: 0 });
    clients.push(once);
    a.add({ kind: 'http500', times: 1 });
    await rejection(once.getGenesisHash());
  });
});
