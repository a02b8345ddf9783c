/**
 * What happens after the send: confirmation, expiry, RPC failures, the one re-sign on BlockhashNotFound,
 * approvals and the per-key lock (held only at the cap gate) — on the real chain, with its fault controls.
 */
import http from 'node:http';
import { approvalId, until } from '../support/async';
import { makeWorld, type World } from '../support/world';
import type { SignProgress } from '../../src/signer/types';
import { FaultProxy } from '../abuse/support/fault-proxy';

const FEE = 5000;

describe('confirmation', () => {
  let w: World;
  beforeEach(async () => {
    // What ends these signs is the expiry (150 blocks of 5 ms) or the failures in a row; the deadline is only a
    // bound, far enough for a loaded machine whose block timer runs late.
    w = await makeWorld({
      keys: { alpha: {} },
      blockIntervalMs: 5,
      timings: { max_rpc_failures: 60, confirm_deadline_ms: 120_000 },
    });
  });
  afterEach(() => w.close());

  it('reports unknown when the send never lands and the blockhash expires, and charges the intent', async () => {
    w.localnet.faults.dropSends(true);
    const r = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    expect(r.outcome).toBe('unknown');
    expect(r.signature).not.toBeNull();
    expect(r.balance_change).toBeNull();
    expect(r.detail).toMatch(
      /^blockhash expired \(finalized height \d+ is past \d+\) .*does not prove it never landed: look up the signature/,
    );
    const [view] = await w.engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(view!.spent_or_reserved_24h).toBe(1_000_000 + FEE); // what the key would lose, the fee once
    expect(w.localnet.stats().sends).toBeGreaterThan(1); // rebroadcast of the same bytes
  });

  it('reports unknown after 60 RPC failures in a row, with the error in the detail', async () => {
    w.localnet.faults.freezeHeight(true);
    w.localnet.faults.dropSends(true);
    w.localnet.faults.failNext(1000, 'getSignatureStatuses');
    w.localnet.faults.failNext(1000, 'getBlockHeight');
    const r = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    expect(r.outcome).toBe('unknown');
    expect(r.detail).toMatch(/-32603.*look up the signature and check the on-chain state before retrying$/);
    expect(w.localnet.stats().sends).toBeGreaterThan(1);
  });

  it('counts RPC failures in a row, not in total: every other poll failing never ends the wait', async () => {
    // The chain's own fault control fails every second status poll; three failures in a row would give up.
    const proxy = await FaultProxy.start();
    const flaky = await makeWorld({
      keys: { alpha: {} },
      blockIntervalMs: 20,
      timings: { max_rpc_failures: 3, rpc_retries: 0 },
      rpcUrl: (url) => {
        proxy.setTarget(url);
        return `http://127.0.0.1:${proxy.port}`;
      },
    });
    try {
      let polls = 0;
      proxy.onCall = (method) => {
        if (method === 'getSignatureStatuses' && ++polls % 2 === 0) flaky.localnet.faults.failNext(1, method);
      };
      // Hold confirmation back until well over three polls have failed in total.
      flaky.localnet.faults.stallConfirmations(true);
      const stalled = flaky.engine.sign({ payload: flaky.transfer('alpha', 1_000_000), principal: flaky.operator });
      await until(() => polls > 8, 'nine status polls, four of them failed');
      flaky.localnet.faults.stallConfirmations(false);
      const r = await stalled;
      expect(polls).toBeGreaterThan(8);
      expect(r.outcome).toBe('confirmed');
    } finally {
      await flaky.close();
      await proxy.close();
    }
  });

  it('reports unknown at the deadline when statuses never confirm', async () => {
    const short = await makeWorld({ keys: { alpha: {} }, blockIntervalMs: 0, timings: { confirm_deadline_ms: 300 } });
    try {
      short.localnet.faults.stallConfirmations(true);
      const r = await short.engine.sign({ payload: short.transfer('alpha', 1_000_000), principal: short.operator });
      expect(r.outcome).toBe('unknown');
      expect(r.detail).toBe(
        'no proven outcome within 0.3s; look up the signature and check the on-chain state before retrying',
      );
    } finally {
      await short.close();
    }
  });
});

describe('re-sign on BlockhashNotFound', () => {
  it('rebuilds with a fresh blockhash once and sends what it simulated last', async () => {
    // A loopback relay in front of the chain expires every blockhash just before the first simulation:
    // the chain then answers BlockhashNotFound for real, as a cluster does when a blockhash ages out.
    const world: { current: World | null } = { current: null };
    let expired = false;
    const relay = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void relayed());
      const relayed = async (): Promise<void> => {
        const body = Buffer.concat(chunks).toString();
        if (!expired && body.includes('"simulateTransaction"') && body.includes('"sigVerify":true')) {
          expired = true;
          world.current?.localnet.faults.expireAllBlockhashes();
        }
        const upstream = await fetch(world.current?.localnet.url ?? '', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      };
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const port = (relay.address() as { port: number }).port;
    const w = await makeWorld({ keys: { alpha: {} }, rpcUrl: () => `http://127.0.0.1:${port}` });
    world.current = w;
    try {
      const r = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
      expect(expired).toBe(true);
      expect(r.outcome).toBe('confirmed');
      expect(w.localnet.stats().calls.simulateTransaction).toBe(2);
    } finally {
      await w.close();
      relay.close();
    }
  });
});

describe('approval and the key lock', () => {
  let w: World;
  beforeEach(async () => {
    w = await makeWorld({
      keys: { wallet: { class: 'wallet', approval: 'confirm' }, other: {} },
      timings: { approval_timeout_ms: 4_000 },
    });
  });
  afterEach(() => w.close());

  it('a sign waiting for its operator holds no lock: a second sign of the key asks for its own approval meanwhile', async () => {
    const first: SignProgress[] = [];
    const second: SignProgress[] = [];
    const p1 = w.engine.sign({
      payload: w.transfer('wallet', 1_000_000),
      principal: w.operator,
      onProgress: (e) => first.push(e),
    });
    const id1 = await approvalId(first);
    const p2 = w.engine.sign({
      payload: w.transfer('wallet', 2_000_000),
      principal: w.operator,
      onProgress: (e) => second.push(e),
    });
    // Another key signs meanwhile, and so does the wallet's second sign: it reaches its own approval request.
    expect((await w.engine.sign({ payload: w.transfer('other', 1_000_000), principal: w.operator })).outcome).toBe(
      'confirmed',
    );
    const id2 = await approvalId(second);
    expect(new Set((await w.ledger.listApprovals({ status: 'pending' })).map((a) => a.id))).toEqual(
      new Set([id1, id2]),
    );
    expect(await w.ledger.keyLocks(['wallet', 'other'])).toEqual([]); // nobody holds a lock while operators decide

    // Decided in the other order: each goes on as soon as its own decision is in.
    await w.ledger.decideApproval(id2, 'rejected', 'operator', Math.floor(Date.now() / 1000));
    expect(await p2).toMatchObject({
      outcome: 'refused',
      failed_check: 'approval',
      reason: 'approval_rejected',
      figures: { approval_id: id2 },
      detail: `approval: not approved: an operator rejected request ${id2}`,
    });
    await w.ledger.decideApproval(id1, 'approved', 'operator', Math.floor(Date.now() / 1000));
    const r1 = await p1;
    expect(r1.outcome).toBe('confirmed');
    expect(r1.balance_change).toBe(-1_000_000 - FEE);
    // The lock was taken once, at the cap gate after the approval.
    expect(first.map((e) => e.stage).filter((s) => s !== 'confirming')).toEqual(['approval', 'lock', 'sent']);
  });

  it('refuses as approval when no operator approves in time', async () => {
    const quick = await makeWorld({
      keys: { wallet: { class: 'wallet', approval: 'confirm' } },
      timings: { approval_timeout_ms: 200 },
    });
    try {
      const r = await quick.engine.sign({ payload: quick.transfer('wallet', 1_000_000), principal: quick.operator });
      const approvals = await quick.ledger.listApprovals();
      expect(approvals.map((a) => a.status)).toEqual(['expired']);
      expect(r).toMatchObject({
        failed_check: 'approval',
        reason: 'approval_timeout',
        figures: { approval_id: approvals[0]!.id },
      });
    } finally {
      await quick.close();
    }
  });
});
