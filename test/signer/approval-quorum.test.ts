/**
 * Approvals by quorum on the real chain: a key whose signs take two of three named approvers, decided through the
 * ledger's one way to vote (what the CLI and the console call). A sign waits until enough distinct approvers
 * approve, is refused as soon as one rejects, never counts a non-approver, and a payload signed twice shares one
 * approval and is sent once.
 */
import { approvalId, signAwaitingApproval, until } from '../support/async';
import { balanceOf, makeWorld, type World } from '../support/world';
import type { Timings } from '../../src/config/types';
import type { SignProgress } from '../../src/signer/types';
import { createDatabase, dbUrl, dropDatabase } from '../ledger/pg';

const now = () => Math.floor(Date.now() / 1000);

describe('approvals by quorum (2 of alice, bob, carol)', () => {
  let w: World;
  beforeEach(async () => {
    w = await makeWorld({
      keys: {
        vault: {
          class: 'wallet',
          approval: 'confirm',
          approvals: { required: 2, approvers: ['alice', 'bob', 'carol'] },
        },
      },
      // A bound for a broken run: every test decides long before it.
      timings: { approval_timeout_ms: 60_000 },
    });
  });
  afterEach(() => w.close());

  /** Starts a sign of `payload` and returns its promise, its progress events and whether it has settled. */
  function start(payload: Record<string, unknown>, signal?: AbortSignal) {
    const events: SignProgress[] = [];
    const state = { settled: false };
    const done = w.engine
      .sign({ payload, principal: w.operator, signal, onProgress: (e) => events.push(e) })
      .finally(() => (state.settled = true));
    return { done, events, state };
  }

  it('check says how many operators must approve, never who', async () => {
    const checked = await w.engine.check({ payload: w.transfer('vault', 1_000_000), principal: w.operator });
    expect(checked).toMatchObject({ outcome: 'ok', would_need_approval: true });
    expect(checked.detail).toBe(
      'key "vault" needs the approval of 2 of its operators to sign this (sa-forge-signer approvals approve ID)',
    );
    // key_show says the same beforehand, and no names either.
    const [view] = await w.engine.keyShow({ key: 'vault', principal: w.operator });
    expect(view!.policy.approvals_required).toBe(2);
    expect(JSON.stringify(view)).not.toMatch(/alice|bob|carol/);
  });

  it('the first approval leaves the sign waiting; the second sends it, it confirms, and the audit names both approvers', async () => {
    const sign = start(w.transfer('vault', 1_000_000));
    const id = await approvalId(sign.events);
    // What the sign reports while it waits (an agent may read it) counts the votes it needs and names nobody.
    expect(sign.events.find((e) => e.stage === 'approval')).toEqual({
      stage: 'approval',
      approval_id: id,
      expires_at: expect.any(Number) as number,
      joined: false,
      required: 2,
    });
    const sends = w.localnet.stats().sends;

    const first = await w.ledger.decideApproval(id, 'approved', 'alice', now(), 'cred-alice');
    expect(first.status).toBe('pending');
    expect(first.votes).toEqual([
      { operator: 'alice', decision: 'approved', ts: first.votes[0]!.ts, credential: 'cred-alice' },
    ]);
    // The same operator again does not make two.
    expect((await w.ledger.decideApproval(id, 'approved', 'alice', now())).status).toBe('pending');
    expect(sign.state.settled).toBe(false);
    expect(w.localnet.stats().sends).toBe(sends);

    expect((await w.ledger.decideApproval(id, 'approved', 'bob', now())).status).toBe('approved');
    const report = await sign.done;
    expect(report.outcome).toBe('confirmed');
    expect(await balanceOf(w, w.keys.vault!.destination)).toBe(1_000_000);
    const final = (await w.ledger.tail(1))[0]!;
    expect([final.command, final.outcome, final.signature]).toEqual(['sign', 'confirmed', report.signature]);
    expect(final.detail).toBe(`approval ${id} approved by alice (credential cred-alice), bob`);
    expect(await w.ledger.getApproval(id)).toMatchObject({ status: 'approved', decided_by: 'alice, bob' });
  });

  it('one approver rejecting refuses the sign at once, naming who rejected, and sends nothing', async () => {
    const sign = start(w.transfer('vault', 2_000_000));
    const id = await approvalId(sign.events);
    await w.ledger.decideApproval(id, 'approved', 'alice', now());
    expect((await w.ledger.decideApproval(id, 'rejected', 'carol', now())).status).toBe('rejected');
    const report = await sign.done;
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'approval',
      signature: null,
      detail: `approval: not approved: an operator rejected request ${id}`,
    });
    expect(w.localnet.stats().sends).toBe(0);
  });

  it("refuses the vote of an operator who is not one of the key's approvers; it counts for nothing", async () => {
    const caller = new AbortController();
    const sign = start(w.transfer('vault', 3_000_000), caller.signal);
    const id = await approvalId(sign.events);
    await expect(w.ledger.decideApproval(id, 'approved', 'mallory', now())).rejects.toThrow(
      `"mallory" is not an approver of approval ${id} (key vault); its approvers: alice, bob, carol`,
    );
    await expect(w.ledger.decideApproval(id, 'approved', 'operator', now())).rejects.toMatchObject({
      code: 'request_invalid',
    });
    await w.ledger.decideApproval(id, 'approved', 'alice', now());
    expect(await w.ledger.getApproval(id)).toMatchObject({ status: 'pending', decided_by: null });
    expect((await w.ledger.getApproval(id))!.votes.map((v) => v.operator)).toEqual(['alice']);
    expect(sign.state.settled).toBe(false);
    caller.abort();
    expect((await sign.done).outcome).toBe('refused');
    expect((await w.ledger.getApproval(id))!.status).toBe('abandoned');
  });

  it('the same payload signed again while its approval is pending waits on that approval; the first sign stops, and it is sent once', async () => {
    const payload = w.transfer('vault', 4_000_000);
    const first = start(payload);
    const id = await approvalId(first.events);
    await w.ledger.decideApproval(id, 'approved', 'alice', now());

    const again = start(payload);
    expect(await approvalId(again.events)).toBe(id);
    expect(again.events.find((e) => e.stage === 'approval')).toMatchObject({ joined: true, required: 2 });
    expect(await w.ledger.listApprovals()).toHaveLength(1);
    // The earlier sign hands the approval over and sends nothing; alice's vote still counts for the later one.
    const superseded = await first.done;
    expect(superseded).toMatchObject({ outcome: 'refused', failed_check: 'approval', signature: null });
    expect(superseded.detail).toBe(
      `approval: not sent: the same payload was signed again and that later sign now waits on approval ${id} (1 of 2 approvals so far); its answer is the one that counts`,
    );
    expect(again.state.settled).toBe(false);

    await w.ledger.decideApproval(id, 'approved', 'carol', now());
    const report = await again.done;
    expect(report.outcome).toBe('confirmed');
    await until(async () => (await balanceOf(w, w.keys.vault!.destination)) === 4_000_000, 'the transfer');
    const finals = (await w.ledger.tail(10)).filter((e) => e.command === 'sign');
    expect(finals.map((e) => e.outcome)).toEqual(['refused', 'confirmed']);
    expect((await w.ledger.tail(10)).filter((e) => e.command === 'sign-intent')).toHaveLength(1);
  });
});

describe('an agent whose call gave up while the operators decide', () => {
  it('signs the same payload again and gets the same approval back, with the votes already cast; it confirms once', async () => {
    const w = await makeWorld({
      keys: {
        vault: { class: 'wallet', approval: 'confirm', approvals: { required: 2, approvers: ['alice', 'bob'] } },
      },
      timings: { approval_timeout_ms: 60_000 },
    });
    try {
      const payload = w.transfer('vault', 5_000_000);
      const firstEvents: SignProgress[] = [];
      const caller = new AbortController();
      const first = w.engine.sign({
        payload,
        principal: w.operator,
        signal: caller.signal,
        onProgress: (e) => firstEvents.push(e),
      });
      const id = await approvalId(firstEvents);
      await w.ledger.decideApproval(id, 'approved', 'alice', now());
      // The client's request timed out: it closed its connection, and with it the sign.
      caller.abort();
      expect((await first).detail).toBe(
        `approval: not approved: request ${id}: the request that asked for it is gone (its caller disconnected or gave up); nothing was sent`,
      );
      expect((await w.ledger.getApproval(id))!.status).toBe('abandoned');

      const againEvents: SignProgress[] = [];
      const again = w.engine.sign({ payload, principal: w.operator, onProgress: (e) => againEvents.push(e) });
      expect(await approvalId(againEvents)).toBe(id);
      expect(againEvents.find((e) => e.stage === 'approval')).toMatchObject({ joined: true });
      expect(await w.ledger.getApproval(id)).toMatchObject({ status: 'pending', votes: [{ operator: 'alice' }] });
      expect((await w.ledger.decideApproval(id, 'approved', 'bob', now())).status).toBe('approved');
      expect((await again).outcome).toBe('confirmed');
      expect(await balanceOf(w, w.keys.vault!.destination)).toBe(5_000_000);
      expect(await w.ledger.listApprovals()).toHaveLength(1);
    } finally {
      await w.close();
    }
  });
});

describe('a quorum not reached in time', () => {
  it('is refused when the approval times out, saying how many approved', async () => {
    const w = await makeWorld({
      keys: {
        vault: { class: 'wallet', approval: 'confirm', approvals: { required: 2, approvers: ['alice', 'bob'] } },
      },
      timings: { approval_timeout_ms: 5_000 },
    });
    try {
      const events: SignProgress[] = [];
      const pending = w.engine.sign({
        payload: w.transfer('vault', 1_000_000),
        principal: w.operator,
        onProgress: (e) => events.push(e),
      });
      const id = await approvalId(events);
      expect((await w.ledger.decideApproval(id, 'approved', 'bob', now())).status).toBe('pending');
      const report = await pending;
      expect(report).toMatchObject({ outcome: 'refused', failed_check: 'approval', signature: null });
      expect(report.detail).toBe(`approval: not approved: request ${id} got 1 of 2 approvals within 5 s, not enough`);
      // The agent learns how many approved, never who.
      expect(JSON.stringify(report)).not.toContain('bob');
      expect((await w.ledger.getApproval(id))!.status).toBe('expired');
    } finally {
      await w.close();
    }
  });
});

describe.each(['sqlite', 'postgres'] as const)("a revoked operator's approval (%s ledger)", (store) => {
  const OPERATORS = ['alice', 'bob', 'carol'].map((name) => ({ name, role: 'approver' as const }));
  const VOTERS = OPERATORS.map((o) => o.name);
  let w: World;
  let db: string | null = null;
  /** A world with a 2-of-3 key on this ledger; each sign below ends at its deadline, which the test waits for. */
  const world = async (timings: Partial<Timings>) => {
    db = store === 'postgres' ? await createDatabase() : null;
    w = await makeWorld({
      keys: {
        vault: { class: 'wallet', approval: 'confirm', approvals: { required: 2, approvers: VOTERS } },
      },
      operators: OPERATORS,
      ...(db === null ? {} : { ledger: { store: 'postgres', url: dbUrl(db), pool_size: 4 } }),
      timings,
    });
  };
  afterEach(async () => {
    await w.close();
    if (db !== null) await dropDatabase(db);
  });

  it('does not count: bob approves, `operator revoke bob`, carol approves, and the sign is not sent', async () => {
    await world({ approval_timeout_ms: 5_000 });
    const { id, done: signing } = await signAwaitingApproval(w.engine, {
      payload: w.transfer('vault', 1_000_000),
      principal: w.operator,
    });
    await w.ledger.decideApproval(id, 'approved', 'bob', now(), null, VOTERS);
    await w.ledger.revokeOperator('bob', now());
    const after = await w.ledger.decideApproval(id, 'approved', 'carol', now(), null, VOTERS);
    expect(after).toMatchObject({ status: 'pending', decided_by: null });
    expect(after.votes.map((v) => [v.operator, v.not_counted ?? null])).toEqual([
      ['bob', 'revoked'],
      ['carol', null],
    ]);

    const report = await signing;
    expect(report).toMatchObject({ outcome: 'refused', failed_check: 'approval', signature: null });
    expect(report.detail).toBe(`approval: not approved: request ${id} got 1 of 2 approvals within 5 s, not enough`);
    expect(await w.ledger.getApproval(id)).toMatchObject({ status: 'expired', decided_by: null });
    expect(w.localnet.stats().sends).toBe(0);
    expect(await balanceOf(w, w.keys.vault!.destination)).toBe(0);
    expect((await w.ledger.tail(10)).filter((e) => e.command === 'sign-intent')).toHaveLength(0);
  });

  it('approved, then an approver revoked before the sign takes the approval: it is not sent', async () => {
    // The sign reads the request once, then sleeps to its deadline (the poll is longer), and reads it there.
    await world({ approval_timeout_ms: 3_000, approval_poll_ms: 60_000 });
    const reads = jest.spyOn(w.ledger, 'getApproval');
    const { id, done: signing } = await signAwaitingApproval(w.engine, {
      payload: w.transfer('vault', 1_000_000),
      principal: w.operator,
    });
    await until(() => Promise.resolve(reads.mock.calls.length > 0), "the sign's first look at its request");
    await w.ledger.decideApproval(id, 'approved', 'bob', now(), null, VOTERS);
    expect((await w.ledger.decideApproval(id, 'approved', 'carol', now(), null, VOTERS)).status).toBe('approved');
    await w.ledger.revokeOperator('bob', now());

    const report = await signing;
    expect(report).toMatchObject({ outcome: 'refused', failed_check: 'approval', signature: null });
    expect(report.detail).toBe(`approval: not approved: request ${id} got 1 of 2 approvals within 3 s, not enough`);
    const final = await w.ledger.getApproval(id);
    expect(final).toMatchObject({ status: 'expired', decided_by: null });
    expect(final!.votes.map((v) => [v.operator, v.not_counted ?? null])).toEqual([
      ['bob', 'revoked'],
      ['carol', null],
    ]);
    expect(w.localnet.stats().sends).toBe(0);
    expect((await w.ledger.tail(10)).filter((e) => e.command === 'sign-intent')).toHaveLength(0);
  });
});
