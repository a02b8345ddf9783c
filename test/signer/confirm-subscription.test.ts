/**
 * Confirmation pushed over the embedded chain's WebSocket (signatureSubscribe), with polling as the fallback: a
 * notice wakes the status read, the read decides, and a socket that is cut, a notice that is lost or a restart of
 * the WebSocket server only leaves the polls to find the outcome. Blocks are produced by hand (blockIntervalMs 0),
 * so each test moves the chain only once the subscription it needs is in place.
 */
import { countRequests, type RequestTally } from '../../src/rpc/request-count';
import { until } from '../support/async';
import { rpcResult } from '../support/rpc';
import { makeWorld, type World } from '../support/world';
import type { Report } from '../../src/signer/report';
import type { SignProgress } from '../../src/signer/types';

/** Polls so rare that a sign the test sees end was ended by a notice (the tests wait for events, never this long). */
const POLLS_OUT_OF_REACH = { poll_interval_ms: 3_600_000, confirm_deadline_ms: 7_200_000 };
/** Polls that find the outcome themselves. */
const POLLS_NEARBY = { poll_interval_ms: 50, confirm_deadline_ms: 120_000 };

/**
 * Starts a sign of `lamports` from alpha; resolves with its signature once sent, with its report to come and with
 * the HTTP requests it made (src/rpc/request-count.ts).
 */
async function startSign(
  w: World,
  lamports = 1_000_000,
): Promise<{ signature: string; done: Promise<Report>; requests: Promise<RequestTally> }> {
  const events: SignProgress[] = [];
  const counted = countRequests(() =>
    w.engine.sign({
      payload: w.transfer('alpha', lamports),
      principal: w.operator,
      onProgress: (e) => events.push(e),
    }),
  );
  const done = counted.then((c) => c.result);
  const requests = counted.then((c) => c.tally);
  const sent = () => events.find((e): e is Extract<SignProgress, { stage: 'sent' }> => e.stage === 'sent');
  await until(() => sent() !== undefined, 'the sign to send its transaction');
  return { signature: sent()?.signature ?? '', done, requests };
}

/**
 * Resolves once the chain holds a subscription to `signature` and the signer has read its acknowledgement: the
 * chain's reply went out before the HTTP round trip that follows, which cannot complete before the signer's socket
 * has been read (one process, one event loop). A notice sent in the same read as the acknowledgement would reach kit
 * before it listens for it.
 */
async function subscribed(w: World, signature: string, what = 'the signature to be subscribed to'): Promise<void> {
  await until(() => w.localnet.stats().pubsub.watching.includes(signature), what);
  await fetch(`${w.localnet.url}/health`).then((r) => r.text());
}

async function finalOf(w: World, signature: string): Promise<string | null> {
  const entries = await w.ledger.signEntriesForKey('alpha', 0);
  return entries.find((e) => e.command === 'sign' && e.signature === signature)?.outcome ?? null;
}

describe('confirmation by subscription', () => {
  let w: World;
  afterEach(() => w.close());

  it('confirms a sign from the notice, the status read behind it, with no poll due', async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: POLLS_OUT_OF_REACH });
    const { signature, done } = await startSign(w);
    await subscribed(w, signature);
    w.localnet.advanceBlocks(1);
    const r = await done;
    expect(r.outcome).toBe('confirmed');
    expect(r.slot).not.toBeNull();
    expect(w.localnet.stats().pubsub.notifications).toBe(1);
    expect(await finalOf(w, signature)).toBe('confirmed');
  });

  it("reads the landed transaction's metadata in the status read a notice brings forward: one request after the send", async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: POLLS_OUT_OF_REACH });
    const { signature, done, requests } = await startSign(w);
    await subscribed(w, signature);
    w.localnet.advanceBlocks(1);
    const r = await done;
    expect(r.outcome).toBe('confirmed');
    expect(r.balance_change).toBe(-1_000_000 - (r.fee ?? 0));
    expect(r.fee).toBeGreaterThan(0);
    const tally = await requests;
    const afterSend = tally.methods.slice((tally.beforeSend ?? 0) + 1);
    expect(afterSend).toEqual([expect.arrayContaining(['getSignatureStatuses', 'getBlockHeight', 'getTransaction'])]);
  });

  it('carries every sign in flight on one connection, each confirmed by its own notice', async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: POLLS_OUT_OF_REACH });
    const signs = [await startSign(w, 1_000_001), await startSign(w, 1_000_002), await startSign(w, 1_000_003)];
    for (const s of signs) await subscribed(w, s.signature);
    w.localnet.advanceBlocks(1);
    const reports = await Promise.all(signs.map((s) => s.done));
    expect(reports.map((r) => r.outcome)).toEqual(['confirmed', 'confirmed', 'confirmed']);
    expect(w.localnet.stats().pubsub).toMatchObject({ connections: 1, subscribes: 3, notifications: 3 });
  });

  it('confirms by polling with the WebSocket cut', async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 20, timings: POLLS_NEARBY });
    w.localnet.faults.cutSockets(true);
    const r = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    expect(r.outcome).toBe('confirmed');
    expect(w.localnet.stats().pubsub).toMatchObject({ connections: 0, subscribes: 0, notifications: 0 });
  });

  it('confirms by polling when the notice is lost', async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: POLLS_NEARBY });
    w.localnet.faults.dropNotifications(true);
    const { signature, done } = await startSign(w);
    await subscribed(w, signature);
    w.localnet.advanceBlocks(1);
    const r = await done;
    expect(r.outcome).toBe('confirmed');
    expect(w.localnet.stats().pubsub).toMatchObject({ dropped: 1, notifications: 0 });
    expect(await finalOf(w, signature)).toBe('confirmed');
  });

  it('does not record as landed a transaction whose notice the status read contradicts', async () => {
    w = await makeWorld({
      keys: { alpha: {} },
      blockIntervalMs: 0,
      timings: { poll_interval_ms: 500, confirm_deadline_ms: 120_000 },
    });
    // The send never lands, and the next block brings a notice that it did.
    w.localnet.faults.dropSends(true);
    w.localnet.faults.falseNotifications(true);
    const { signature, done } = await startSign(w);
    await subscribed(w, signature);
    const readsBefore = w.localnet.stats().calls.getSignatureStatuses ?? 0;
    w.localnet.advanceBlocks(1);
    expect(w.localnet.stats().pubsub.false_notifications).toBe(1);
    await until(
      () => (w.localnet.stats().calls.getSignatureStatuses ?? 0) > readsBefore,
      'a status read after the notice',
    );
    expect(await finalOf(w, signature)).toBeNull();
    // Past the blockhash's last valid height the sign ends as it does with no notice at all.
    w.localnet.advanceBlocks(200);
    const r = await done;
    expect(r.outcome).toBe('unknown');
    expect(r.slot).toBeNull();
    expect(await finalOf(w, signature)).toBe('unknown');
    const [view] = await w.engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(view!.spent_or_reserved_24h).toBeGreaterThanOrEqual(1_000_000); // the reservation stays
  });

  it('subscribes again after the WebSocket server restarts, and confirms from the new notice', async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: POLLS_OUT_OF_REACH });
    const { signature, done } = await startSign(w);
    await subscribed(w, signature);
    w.localnet.faults.restartWebSocket();
    expect(w.localnet.stats().pubsub.watching).toEqual([]);
    await subscribed(w, signature, 'the signature to be subscribed to again');
    expect(w.localnet.stats().pubsub).toMatchObject({ connections: 2, subscribes: 2 });
    w.localnet.advanceBlocks(1);
    const r = await done;
    expect(r.outcome).toBe('confirmed');
    expect(w.localnet.stats().pubsub.notifications).toBe(1);
  });
});

describe('sign-only watch by subscription', () => {
  let w: World;
  afterEach(() => w.close());

  /** A sign_only transfer from alpha; its signature and signed bytes. */
  async function signOnly(w: World): Promise<{ signature: string; wire: string }> {
    const r = await w.engine.sign({
      payload: w.transfer('alpha', 1_000_000),
      mode: 'sign_only',
      principal: w.operator,
    });
    expect(r.outcome).toBe('signed');
    return { signature: r.signature ?? '', wire: r.signed_transaction ?? '' };
  }

  it('records the landing a notice brings forward, the status read behind it, with no poll due', async () => {
    w = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: POLLS_OUT_OF_REACH });
    const { signature, wire } = await signOnly(w);
    await subscribed(w, signature);
    // The caller sends it; the next block confirms it and the chain notifies.
    await rpcResult(w.localnet.url, 'sendTransaction', [wire, { encoding: 'base64' }]);
    w.localnet.advanceBlocks(1);
    await until(async () => (await finalOf(w, signature)) !== null, 'the final entry');
    expect(await finalOf(w, signature)).toBe('confirmed');
    expect(w.localnet.stats().pubsub.notifications).toBe(1);
  });

  it('does not record a landing from a notice the status read contradicts', async () => {
    w = await makeWorld({
      keys: { alpha: {} },
      blockIntervalMs: 0,
      timings: { poll_interval_ms: 500, confirm_deadline_ms: 120_000 },
    });
    w.localnet.faults.falseNotifications(true);
    const { signature } = await signOnly(w);
    await subscribed(w, signature);
    const readsBefore = w.localnet.stats().calls.getSignatureStatuses ?? 0;
    // Nobody sends it; the next block brings a notice that it landed.
    w.localnet.advanceBlocks(1);
    expect(w.localnet.stats().pubsub.false_notifications).toBe(1);
    await until(
      () => (w.localnet.stats().calls.getSignatureStatuses ?? 0) > readsBefore,
      'a status read after the notice',
    );
    expect(await finalOf(w, signature)).toBeNull();
    // Past the blockhash's last valid height it ends as a sign-only transaction nobody sent: expired, not landed.
    w.localnet.advanceBlocks(200);
    await until(async () => (await finalOf(w, signature)) !== null, 'the final entry');
    expect(await finalOf(w, signature)).toBe('signed_expired');
  });
});
