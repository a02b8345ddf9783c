/**
 * An approval binds what is sent (docs/policy.md, "Approvals by quorum"): on the embedded chain, an allowed
 * destination closes the token accounts that the approved transaction would create "if missing" while the
 * operator decides. Approved with the figures of the first simulation, the transaction simulated again would
 * recreate them at the key's cost; it is refused, and nothing is sent.
 */
import { generateKeyPairSigner } from '@solana/kit';
import { nowSeconds } from '../../src/util/time';
import { signAwaitingApproval } from '../support/async';
import { closingDestination, type ClosingDestination } from '../support/closing-destination';
import { balanceOf, makeWorld, type World } from '../support/world';

const PAYMENT = 6_000_000;
const FEE = 5_000;

let w: World;
let vault: World['keys'][string];
let dest: ClosingDestination;

beforeAll(async () => {
  const signer = await generateKeyPairSigner();
  w = await makeWorld({
    keys: { vault: { approval: 'confirm', approve_above_lamports: 5_000_000, transfer_to: [signer.address] } },
    timings: { approval_timeout_ms: 60_000, confirm_deadline_ms: 30_000 },
  });
  vault = w.keys.vault!;
  dest = await closingDestination(w.localnet, { signer });
}, 30_000);

afterAll(async () => {
  await w.close();
});

const signAwaiting = (payload: Record<string, unknown>) =>
  signAwaitingApproval(w.engine, { payload, principal: w.operator });

test('a transaction that would spend more after the approval than the operators approved is refused, nothing sent', async () => {
  await dest.open();
  const before = await balanceOf(w, vault.pubkey);
  const sign = await signAwaiting(await dest.paymentWithCreates(vault.pubkey, PAYMENT));
  const { id } = sign;
  const asked = await w.ledger.getApproval(id);
  // What the operator is shown: the payment and the fee, the creates costing nothing.
  expect(asked?.balance_change).toBe(-(PAYMENT + FEE));

  await dest.close();
  const sendsBefore = w.localnet.stats().sends;
  await w.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  const report = await sign.done;

  expect(report).toMatchObject({
    outcome: 'refused',
    failed_check: 'approval',
    reason: 'approval_figures_changed',
    signature: null,
    figures: {
      approval_id: id,
      requested: PAYMENT + FEE + dest.accounts * dest.rentPerAccount,
      approved: PAYMENT + FEE,
    },
  });
  expect(report.detail).toContain(`approval ${id}`);
  expect(w.localnet.stats().sends).toBe(sendsBefore);
  expect(await balanceOf(w, vault.pubkey)).toBe(before);
  expect(await dest.existing()).toBe(0);
  const final = (await w.ledger.tail(5)).find((e) => e.command === 'sign' && e.payload_hash === asked?.payload_hash);
  expect(final).toMatchObject({ outcome: 'refused' });
}, 60_000);

test('a sign of the same payload that joins the approval is bound by the figures the operators were shown', async () => {
  await dest.open();
  const before = await balanceOf(w, vault.pubkey);
  const payload = await dest.paymentWithCreates(vault.pubkey, PAYMENT);
  const first = await signAwaiting(payload);
  const { id } = first;

  await dest.close();
  // The agent's call ran out; it signs the same payload again, whose first simulation now costs the key the rent.
  const again = await signAwaiting(payload);
  expect(again.id).toBe(id);
  expect(await first.done).toMatchObject({ outcome: 'refused', reason: 'approval_superseded' });
  await w.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());

  expect(await again.done).toMatchObject({
    outcome: 'refused',
    reason: 'approval_figures_changed',
    figures: { approval_id: id, approved: PAYMENT + FEE },
    signature: null,
  });
  expect(await balanceOf(w, vault.pubkey)).toBe(before);
}, 60_000);

test('an approved transaction whose figures did not change is sent', async () => {
  await dest.open();
  const destBefore = await balanceOf(w, dest.address);
  const sign = await signAwaiting(await dest.paymentWithCreates(vault.pubkey, PAYMENT));
  const { id } = sign;
  await w.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  expect(await sign.done).toMatchObject({ outcome: 'confirmed', balance_change: -(PAYMENT + FEE) });
  expect(await balanceOf(w, dest.address)).toBe(destBefore + PAYMENT);
}, 60_000);
