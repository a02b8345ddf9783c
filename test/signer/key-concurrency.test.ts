/**
 * One key, many signs at once, at a real cluster's pace (a block every 400 ms, `confirmed` two blocks after
 * landing): the key's lock covers only the cap gate (usage, cap, halt, durable intent), so signs overlap through
 * simulation, approval and confirmation while the cap still admits exactly what it admits one at a time.
 * Real chain over JSON-RPC, real SQLite ledger (test/replicas/ runs the same on PostgreSQL with two replicas).
 */
import type { AuditEntry } from '../../src/ledger/types';
import type { Report } from '../../src/signer/report';
import type { SignProgress } from '../../src/signer/types';
import { approvalId, until } from '../support/async';
import { balanceOf, makeWorld, type World } from '../support/world';

/** Mainnet-like: 400 ms blocks, confirmed after 2. Timeouts are bounds for a broken run on a loaded machine. */
const MAINNET_PACE = {
  blockIntervalMs: 400,
  confirmAfterBlocks: 2,
  timings: { poll_interval_ms: 50, confirm_deadline_ms: 60_000, approval_timeout_ms: 60_000, rpc_timeout_ms: 10_000 },
};
const IN_FLIGHT = 32;
const AMOUNT = 1_000_000;

const signEntries = (w: World, key: string): Promise<AuditEntry[]> => w.ledger.signEntriesForKey(key, 0);
const intentsOf = async (w: World, key: string) =>
  (await signEntries(w, key)).filter((e) => e.command === 'sign-intent');
const now = () => Math.floor(Date.now() / 1000);

/** What one transfer of `lamports` reserves at the cap gate, as `check` reports it. */
async function reservationOf(w: World, key: string, lamports: number): Promise<number> {
  const probe = await w.engine.check({ payload: w.transfer(key, lamports), principal: w.operator });
  expect(probe.outcome).toBe('ok');
  return -probe.balance_change!;
}

/** A `confirm` wallet key whose daily cap admits one sign of AMOUNT and half of another (measured, not assumed). */
async function confirmKeyCappedAtOneAndAHalfSigns(): Promise<World> {
  const probe = await makeWorld({ keys: { probe: {} }, ...MAINNET_PACE });
  const reservation = await reservationOf(probe, 'probe', AMOUNT);
  await probe.close();
  return makeWorld({
    keys: { wallet: { class: 'wallet', approval: 'confirm', daily_lamport_cap: reservation + reservation / 2 } },
    ...MAINNET_PACE,
  });
}

describe('one key, 32 signs in flight, at mainnet pace (SQLite)', () => {
  let w: World;
  afterEach(() => w.close());

  it('all under the cap: the signs reserve side by side, not one confirmation after another, and all 32 confirm', async () => {
    w = await makeWorld({ keys: { alpha: {} }, ...MAINNET_PACE });
    const reports = await Promise.all(
      Array.from({ length: IN_FLIGHT }, (_, i) =>
        w.engine.sign({ payload: w.transfer('alpha', AMOUNT + i, `sign ${i}`), principal: w.operator }),
      ),
    );
    expect(reports.map((r) => r.outcome)).toEqual(Array(IN_FLIGHT).fill('confirmed'));
    // Chain order is commit order: reservations were written while earlier signs of the key still waited for
    // their confirmation, so the signs ran side by side, not one confirmation after another (a lock held through
    // confirmation gives I F I F …). How many intents precede the first final depends on the machine's speed.
    const commands = (await signEntries(w, 'alpha')).map((e) => e.command);
    expect(commands.filter((c) => c === 'sign-intent')).toHaveLength(IN_FLIGHT);
    expect(commands.indexOf('sign')).toBeGreaterThan(1);
    expect(await balanceOf(w, w.keys.alpha!.destination)).toBe(
      Array.from({ length: IN_FLIGHT }, (_, i) => AMOUNT + i).reduce((a, b) => a + b, 0),
    );
  }, 120_000);

  it('the cap admits exactly N of 32: exactly N confirm and the ledger spends exactly their sum', async () => {
    const ADMITTED = 5;
    w = await makeWorld({ keys: { probe: {} }, ...MAINNET_PACE });
    const reservation = await reservationOf(w, 'probe', AMOUNT + IN_FLIGHT);
    await w.close();
    // N reservations fit, N + 1 do not, whatever the amounts' small differences.
    const cap = ADMITTED * reservation + Math.floor(reservation / 2);
    w = await makeWorld({ keys: { capped: { daily_lamport_cap: cap } }, ...MAINNET_PACE });

    const reports = await Promise.all(
      Array.from({ length: IN_FLIGHT }, (_, i) =>
        w.engine.sign({ payload: w.transfer('capped', AMOUNT + i, `capped ${i}`), principal: w.operator }),
      ),
    );
    const confirmed = reports.filter((r) => r.outcome === 'confirmed');
    const refused = reports.filter((r) => r.outcome === 'refused');
    expect(confirmed).toHaveLength(ADMITTED);
    expect(refused).toHaveLength(IN_FLIGHT - ADMITTED);
    for (const r of refused)
      expect(r).toMatchObject({ failed_check: 'limits', reason: 'per_day_cap', signature: null });

    const intents = await intentsOf(w, 'capped');
    expect(new Set(intents.map((e) => e.signature))).toEqual(new Set(confirmed.map((r) => r.signature)));
    const spent = confirmed.reduce((sum, r) => sum - r.balance_change!, 0);
    const [view] = await w.engine.keyShow({ key: 'capped', principal: w.operator });
    expect(view!.spent_or_reserved_24h).toBe(spent);
    expect(spent).toBeLessThanOrEqual(cap);
    const sent = confirmed.map((r) => Number(/^capped (\d+)$/.exec(r.summary)![1]));
    expect(await balanceOf(w, w.keys.capped!.destination)).toBe(sent.reduce((sum, i) => sum + AMOUNT + i, 0));
  }, 120_000);
});

describe('the same transfer asked twice at once (mainnet pace, SQLite)', () => {
  let w: World;
  afterEach(() => w.close());

  it('is one transaction on chain: the second request is refused, not reported or charged as a second payment', async () => {
    w = await makeWorld({ keys: { alpha: {} }, ...MAINNET_PACE });
    // Both compile on the same blockhash: the same bytes, the same signature. (Held in one block here; two requests
    // 400 ms apart are two transactions.)
    w.localnet.faults.freezeHeight(true);
    const signs = [1, 2].map(() =>
      w.engine.sign({ payload: w.transfer('alpha', AMOUNT, 'pay once'), principal: w.operator }),
    );
    const first = await Promise.race(signs);
    expect(first.outcome).toBe('refused'); // the other one waits for its block
    w.localnet.faults.freezeHeight(false);
    const twice = await Promise.all(signs);
    const confirmed = twice.filter((r) => r.outcome === 'confirmed');
    const refused = twice.filter((r) => r.outcome === 'refused');
    expect(confirmed).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      failed_check: 'cluster',
      reason: 'signature_in_flight',
      figures: { signature: confirmed[0]!.signature },
      signature: null,
    });
    expect(await intentsOf(w, 'alpha')).toHaveLength(1);
    const [view] = await w.engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(view!.spent_or_reserved_24h).toBe(-confirmed[0]!.balance_change!);
    expect(await balanceOf(w, w.keys.alpha!.destination)).toBe(AMOUNT);
  }, 60_000);
});

describe('approvals do not block the key (mainnet pace, SQLite)', () => {
  let w: World;
  afterEach(() => w.close());

  /** Starts a sign and returns its promise, its progress events and whether it has settled. */
  function start(key: string, lamports: number, summary: string) {
    const events: SignProgress[] = [];
    const state = { settled: false };
    const done = w.engine
      .sign({ payload: w.transfer(key, lamports, summary), principal: w.operator, onProgress: (e) => events.push(e) })
      .finally(() => (state.settled = true));
    return { done, events, state };
  }

  it('a large sign waiting for its operator does not delay small signs of the same key: they confirm meanwhile', async () => {
    w = await makeWorld({
      keys: { wallet: { class: 'wallet', approval: 'confirm', approve_above_lamports: 5_000_000 } },
      ...MAINNET_PACE,
    });
    const large = start('wallet', 10_000_000, 'large');
    const id = await approvalId(large.events);
    const small = await Promise.all(
      [1, 2, 3].map((i) =>
        w.engine.sign({ payload: w.transfer('wallet', AMOUNT + i, `small ${i}`), principal: w.operator }),
      ),
    );
    expect(small.map((r) => r.outcome)).toEqual(['confirmed', 'confirmed', 'confirmed']);
    expect(small.every((r) => r.checks.includes('approval'))).toBe(true); // below the threshold: no operator
    // The large one still waits for its operator, holding nothing.
    expect(large.state.settled).toBe(false);
    expect((await w.ledger.getApproval(id))!.status).toBe('pending');
    expect(await w.ledger.keyLocks(['wallet'])).toEqual([]);

    await w.ledger.decideApproval(id, 'approved', 'operator', now());
    const r = await large.done;
    expect(r.outcome).toBe('confirmed');
    expect(await balanceOf(w, w.keys.wallet!.destination)).toBe(10_000_000 + 3 * AMOUNT + 6);
  }, 120_000);

  it('two pending approvals whose sum passes the cap, both approved: the first confirms, the second is refused by the cap', async () => {
    w = await confirmKeyCappedAtOneAndAHalfSigns();
    // Different amounts: the same transfer on the same blockhash would be the same transaction.
    const first = start('wallet', AMOUNT, 'first');
    const second = start('wallet', AMOUNT + 1, 'second');
    // Each fits the cap alone, so both reach their operator.
    const [id1, id2] = await Promise.all([approvalId(first.events), approvalId(second.events)]);

    await w.ledger.decideApproval(id1, 'approved', 'operator', now());
    await until(async () => (await intentsOf(w, 'wallet')).length === 1, "the first sign's intent");
    await w.ledger.decideApproval(id2, 'approved', 'operator', now());

    const r2: Report = await second.done;
    expect(r2).toMatchObject({ outcome: 'refused', failed_check: 'limits', reason: 'per_day_cap', signature: null });
    // Refused at the gate, on this transaction's own spend.
    expect(Object.keys(r2.figures ?? {})).toEqual(['spent', 'requested', 'cap']);
    expect((await first.done).outcome).toBe('confirmed');
    expect((await intentsOf(w, 'wallet')).map((e) => e.summary)).toEqual(['first']);
    expect(await balanceOf(w, w.keys.wallet!.destination)).toBe(AMOUNT);
  }, 120_000);

  it('approved at the same instant: exactly one of the two passes the cap gate', async () => {
    w = await confirmKeyCappedAtOneAndAHalfSigns();
    const signs = [start('wallet', AMOUNT, 'one'), start('wallet', AMOUNT + 1, 'two')];
    const ids = await Promise.all(signs.map((s) => approvalId(s.events)));
    await Promise.all(ids.map((id) => w.ledger.decideApproval(id, 'approved', 'operator', now())));
    const reports = await Promise.all(signs.map((s) => s.done));
    expect(reports.map((r) => r.outcome).sort()).toEqual(['confirmed', 'refused']);
    expect(reports.find((r) => r.outcome === 'refused')).toMatchObject({
      failed_check: 'limits',
      reason: 'per_day_cap',
    });
    expect(await intentsOf(w, 'wallet')).toHaveLength(1);
    const landed = reports.find((r) => r.outcome === 'confirmed')!;
    expect(await balanceOf(w, w.keys.wallet!.destination)).toBe(landed.summary === 'one' ? AMOUNT : AMOUNT + 1);
  }, 120_000);

  it('a halt pulled while signs wait for approval stops every one of them once approved', async () => {
    w = await makeWorld({ keys: { wallet: { class: 'wallet', approval: 'confirm' } }, ...MAINNET_PACE });
    const signs = [1, 2, 3].map((i) => start('wallet', AMOUNT + i, `held ${i}`));
    const ids = await Promise.all(signs.map((s) => approvalId(s.events)));
    const halted = await w.engine.halt({ key: 'wallet', reason: 'stop everything', principal: w.operator });
    expect(halted.halted).toHaveLength(1);
    await Promise.all(ids.map((id) => w.ledger.decideApproval(id, 'approved', 'operator', now())));
    for (const r of await Promise.all(signs.map((s) => s.done))) {
      expect(r).toMatchObject({ outcome: 'refused', failed_check: 'halted', reason: 'halted', signature: null });
    }
    expect(await intentsOf(w, 'wallet')).toEqual([]);
  }, 120_000);
});
