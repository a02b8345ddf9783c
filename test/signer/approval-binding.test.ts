/**
 * An approval binds what is sent (docs/policy.md, "Approvals by quorum"): on the embedded chain, an allowed
 * destination closes the token accounts that the approved transaction would create "if missing" while the
 * operator decides. Approved with the figures of the first simulation, the transaction simulated again would
 * recreate them at the key's cost; it is refused, and nothing is sent.
 */
import {
  address,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { SignProgress } from '../../src/signer/types';
import { nowSeconds } from '../../src/util/time';
import { approvalId } from '../support/async';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import { balanceOf, makeWorld, type World } from '../support/world';
import { latestLifetime, transfer, waitConfirmed, wireTransaction, type Rpc } from './kit-transactions';

const PAYMENT = 6_000_000;
const FEE = 5_000;
const ACCOUNTS = 10;

let w: World;
let rpc: Rpc;
let vault: World['keys'][string];
/** The one allowed destination, which owns (and can close) the token accounts. */
let dest: KeyPairSigner;
let mints: string[];

beforeAll(async () => {
  dest = await generateKeyPairSigner();
  w = await makeWorld({
    keys: { vault: { approval: 'confirm', approve_above_lamports: 5_000_000, transfer_to: [dest.address] } },
    timings: { approval_timeout_ms: 60_000, confirm_deadline_ms: 30_000 },
  });
  rpc = createSolanaRpc(w.localnet.url);
  vault = w.keys.vault!;
  w.localnet.airdrop(dest.address, 1_000_000_000);
  mints = Array.from({ length: ACCOUNTS }, () => setMint(w.localnet, randomAddress()));
}, 30_000);

afterAll(async () => {
  await w.close();
});

async function associatedAccount(mint: string): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({
    owner: dest.address,
    mint: address(mint),
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  return ata;
}

/** The destination holds an (empty) associated token account of every mint: the "if missing" creates cost nothing. */
async function openDestinationAccounts(): Promise<void> {
  for (const mint of mints) {
    setTokenAccount(w.localnet, { mint, owner: dest.address, amount: 0n, address: await associatedAccount(mint) });
  }
}

/** The destination closes its accounts and takes their rent: a real transaction it signs and sends itself. */
async function closeDestinationAccounts(): Promise<void> {
  const closes: Instruction[] = await Promise.all(
    mints.map(async (mint) =>
      getCloseAccountInstruction({
        account: await associatedAccount(mint),
        destination: dest.address,
        owner: dest,
      }),
    ),
  );
  const lifetime = await latestLifetime(rpc);
  const tx = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(dest, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(closes, m),
    ),
  );
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  await waitConfirmed(rpc, signature);
}

/** The agent's transaction: the payment to the destination, and a "create if missing" of each of its accounts. */
async function paymentWithCreates(): Promise<Record<string, unknown>> {
  const creates = await Promise.all(
    mints.map(async (mint) => {
      const ix = getCreateAssociatedTokenIdempotentInstruction({
        payer: { address: address(vault.pubkey) } as KeyPairSigner,
        ata: await associatedAccount(mint),
        owner: dest.address,
        mint: address(mint),
      });
      // The key pays: a signer account with no kit signer attached (the service signs it).
      return { ...ix, accounts: ix.accounts.map(({ address: a, role }) => ({ address: a, role })) };
    }),
  );
  const wire = await wireTransaction(
    vault.pubkey,
    [transfer(address(vault.pubkey), dest.address, PAYMENT), ...creates],
    {
      version: 'legacy',
      lifetime: await latestLifetime(rpc),
    },
  );
  return { version: 2, transaction: wire, summary: 'pay the destination', warnings: [] };
}

function signWithProgress(payload: Record<string, unknown>) {
  const events: SignProgress[] = [];
  const done = w.engine.sign({ payload, principal: w.operator, onProgress: (p) => events.push(p) });
  return { events, done };
}

test('a transaction that would spend more after the approval than the operators approved is refused, nothing sent', async () => {
  await openDestinationAccounts();
  const before = await balanceOf(w, vault.pubkey);
  const sign = signWithProgress(await paymentWithCreates());
  const id = await approvalId(sign.events);
  const asked = await w.ledger.getApproval(id);
  // What the operator is shown: the payment and the fee, the creates costing nothing.
  expect(asked?.balance_change).toBe(-(PAYMENT + FEE));

  await closeDestinationAccounts();
  const sendsBefore = w.localnet.stats().sends;
  await w.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  const report = await sign.done;

  const rent = await rpc.getMinimumBalanceForRentExemption(165n).send();
  expect(report).toMatchObject({
    outcome: 'refused',
    failed_check: 'approval',
    reason: 'approval_figures_changed',
    signature: null,
    figures: { approval_id: id, requested: PAYMENT + FEE + ACCOUNTS * Number(rent), approved: PAYMENT + FEE },
  });
  expect(report.detail).toContain(`approval ${id}`);
  expect(w.localnet.stats().sends).toBe(sendsBefore);
  expect(await balanceOf(w, vault.pubkey)).toBe(before);
  for (const mint of mints) {
    expect(await rpc.getAccountInfo(await associatedAccount(mint), { encoding: 'base64' }).send()).toMatchObject({
      value: null,
    });
  }
  const final = (await w.ledger.tail(5)).find((e) => e.command === 'sign' && e.payload_hash === asked?.payload_hash);
  expect(final).toMatchObject({ outcome: 'refused' });
}, 60_000);

test('a sign of the same payload that joins the approval is bound by the figures the operators were shown', async () => {
  await openDestinationAccounts();
  const before = await balanceOf(w, vault.pubkey);
  const payload = await paymentWithCreates();
  const first = signWithProgress(payload);
  const id = await approvalId(first.events);

  await closeDestinationAccounts();
  // The agent's call ran out; it signs the same payload again, whose first simulation now costs the key the rent.
  const again = signWithProgress(payload);
  expect(await approvalId(again.events)).toBe(id);
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
  await openDestinationAccounts();
  const destBefore = await balanceOf(w, dest.address);
  const sign = signWithProgress(await paymentWithCreates());
  const id = await approvalId(sign.events);
  await w.ledger.decideApproval(id, 'approved', 'operator', nowSeconds());
  expect(await sign.done).toMatchObject({ outcome: 'confirmed', balance_change: -(PAYMENT + FEE) });
  expect(await balanceOf(w, dest.address)).toBe(destBefore + PAYMENT);
}, 60_000);
