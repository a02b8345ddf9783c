/**
 * Transactions another account pays the fee for (the x402 shape: a facilitator is the fee payer, the key signs
 * its own slot, the facilitator signs last and sends), through the real engine on real LiteSVM. The watcher
 * finds them by the key's own signature among the key's transactions, since their id (the fee payer's
 * signature) does not exist when the key signs.
 */
import {
  AccountRole,
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  partiallySignTransaction,
  type Instruction,
  type KeyPairSigner,
  type Transaction,
} from '@solana/kit';
import { openEngine } from '../../src/signer';
import { verifySignature } from '../../src/keys/keypair';
import type { AuditEntry } from '../../src/ledger/types';
import type { Report } from '../../src/signer/report';
import type { SignerEngine } from '../../src/signer/types';
import { decodeAddress } from '../../src/util/base58';
import { finalEntry } from '../support/async';
import { randomAddress } from '../support/payloads';
import { setMint, setTokenAccount } from '../support/tokens';
import { SPL_TOKEN_PROGRAM } from '../../src/solana/programs';
import { balanceOf, makeWorld, type World } from '../support/world';
import { fundedSigner, latestLifetime, transfer, waitConfirmed, wireTransaction, type Rpc } from './kit-transactions';

const SOL = 1_000_000_000;
const CAP = 2 * SOL;

let w: World;
let rpc: Rpc;
let key: World['keys'][string];
let facilitator: KeyPairSigner;

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: { daily_lamport_cap: CAP, max_fee_lamports: 1 }, bravo: {} } });
  rpc = createSolanaRpc(w.localnet.url);
  key = w.keys.alpha!;
  facilitator = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  // Small transfers land only on an account that is already rent-exempt.
  w.localnet.airdrop(key.destination, SOL);
});

afterAll(async () => {
  await w.close();
});

const v2 = (transaction: string) => ({ version: 2, transaction, summary: 'paid by a facilitator', warnings: [] });

/** A System transfer `from` must sign, with no kit signer attached (its slot stays empty). */
function signedBy(from: string, to: string, lamports: number): Instruction {
  const ix = transfer(address(from), to, lamports);
  const accounts = (ix.accounts ?? []).map((a, i) => (i === 0 ? { ...a, role: AccountRole.WRITABLE_SIGNER } : a));
  return { ...ix, accounts };
}

/** A v0 transfer of `lamports` from the key, the facilitator paying the fee; every slot empty. */
async function facilitated(lamports: number): Promise<string> {
  return wireTransaction(facilitator.address, [signedBy(key.pubkey, key.destination, lamports)], {
    lifetime: await latestLifetime(rpc),
  });
}

const decode = (base64: string): Transaction => getTransactionDecoder().decode(Buffer.from(base64, 'base64'));

/** What the facilitator does with the signer's bytes: adds its signature and sends; the id is its signature. */
async function facilitatorSends(signedByKey: string): Promise<string> {
  const tx = await partiallySignTransaction([facilitator.keyPair], decode(signedByKey));
  const id = getSignatureFromTransaction(tx);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  await waitConfirmed(rpc, id);
  return id;
}

async function entriesFor(signature: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of w.ledger.entries()) if (e.signature === signature) out.push(e);
  return out;
}

const finalOf = (signature: string, timeoutMs = 10_000) => finalEntry(w.ledger, signature, timeoutMs);

async function spent(engine: SignerEngine = w.engine): Promise<number> {
  const [view] = await engine.keyShow({ key: 'alpha', principal: w.operator });
  return view!.spent_or_reserved_24h;
}

const signOnly = (tx: string, engine: SignerEngine = w.engine): Promise<Report> =>
  engine.sign({ payload: v2(tx), key: 'alpha', mode: 'sign_only', principal: w.operator });

describe('signing', () => {
  it('fills only the key slot, leaves the fee payer slot empty, and counts only what the key loses', async () => {
    const tx = await facilitated(5000);
    const report = await signOnly(tx);
    expect(report).toMatchObject({ outcome: 'signed', failed_check: null, fee_payer: facilitator.address });
    // The facilitator pays the fee: the key loses exactly the transfer (the fee cap of 1 lamport does not apply).
    expect(report.balance_change).toBe(-5000);
    expect(report.fee).toBeGreaterThan(0);
    expect(report.explorer).toBeNull();
    expect(report.detail).toContain(`the fee payer ${facilitator.address} must add its signature and send it`);
    const signed = decode(report.signed_transaction!);
    expect(signed.signatures[facilitator.address]).toBeNull();
    const own = signed.signatures[address(key.pubkey)]!;
    expect(verifySignature(decodeAddress(key.pubkey)!, new Uint8Array(signed.messageBytes), new Uint8Array(own))).toBe(
      true,
    );
    expect(Buffer.from(signed.messageBytes).equals(Buffer.from(decode(tx).messageBytes))).toBe(true);
    const [intent] = await entriesFor(report.signature!);
    expect(intent).toMatchObject({ command: 'sign-intent', outcome: 'pending', balance_change: -5000 });
    expect(intent!.detail).toMatch(
      new RegExp(`; fee payer ${facilitator.address} signs and sends it after slot \\d+$`),
    );
    await facilitatorSends(report.signed_transaction!);
  });

  it('what the fee payer receives from the key counts beyond nothing, even less than its own fee', async () => {
    // An empty token account of the key holding 3 000 lamports, closed to the facilitator: its balance still falls
    // (it pays a 5 000 lamport fee), yet it gains the 3 000.
    const mint = randomAddress();
    setMint(w.localnet, mint, { decimals: 6 });
    const account = setTokenAccount(w.localnet, { mint, owner: key.pubkey, amount: 0n });
    const info = await rpc.getAccountInfo(address(account), { encoding: 'base64' }).send();
    const data = Buffer.from(info.value!.data[0], 'base64');
    w.localnet.setAccount(account, { lamports: 3000, owner: SPL_TOKEN_PROGRAM, data: new Uint8Array(data) });
    const close: Instruction = {
      programAddress: address(SPL_TOKEN_PROGRAM),
      accounts: [
        { address: address(account), role: AccountRole.WRITABLE },
        { address: facilitator.address, role: AccountRole.WRITABLE },
        { address: address(key.pubkey), role: AccountRole.READONLY_SIGNER },
      ],
      data: new Uint8Array([9]),
    };
    const tx = await wireTransaction(facilitator.address, [close], { lifetime: await latestLifetime(rpc) });
    for (const r of [
      await w.engine.check({ payload: v2(tx), key: 'alpha', principal: w.operator }),
      await signOnly(tx),
    ]) {
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'destinations',
        reason: 'destination_not_allowed',
        figures: { destination: facilitator.address, requested: 3000 },
      });
    }
  });

  it('the key pays the fee in the ordinary case: the report names the key as fee payer', async () => {
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 5000)], {
      lifetime: await latestLifetime(rpc),
    });
    // max_fee_lamports 1 applies when the key pays.
    const report = await w.engine.check({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'limits',
      reason: 'fee_cap',
      figures: { cap: 1 },
      fee_payer: key.pubkey,
    });
  });

  it('without the key argument no key is chosen for a foreign fee payer, and the error says to name it', async () => {
    const tx = await facilitated(1000);
    await expect(w.engine.check({ payload: v2(tx), principal: w.operator })).rejects.toMatchObject({
      code: 'key_unknown',
      message: expect.stringContaining("name it with the 'key' argument") as unknown,
    });
  });

  it('check passes and warns that sign must use sign_only; send mode is refused, nothing written', async () => {
    const tx = await facilitated(1000);
    const checked = await w.engine.check({ payload: v2(tx), key: 'alpha', principal: w.operator });
    expect(checked).toMatchObject({ outcome: 'ok', fee_payer: facilitator.address, balance_change: -1000 });
    expect(checked.warnings.join(' ')).toMatch(/sign it with mode "sign_only"/);
    const sent = await w.engine.sign({ payload: v2(tx), key: 'alpha', principal: w.operator });
    expect(sent).toMatchObject({
      outcome: 'refused',
      failed_check: 'fee_payer',
      reason: 'foreign_fee_payer_needs_sign_only',
      figures: { fee_payer: facilitator.address },
      signature: null,
    });
  });

  it('a key that is neither the fee payer nor a signer is refused', async () => {
    const tx = await wireTransaction(facilitator.address, [transfer(facilitator, key.destination, 1000)], {
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.check({ payload: v2(tx), key: 'alpha', principal: w.operator });
    expect(report).toMatchObject({ outcome: 'refused', failed_check: 'fee_payer', reason: 'key_not_a_signer' });
  });

  it("another signer's empty slot is still refused: only the fee payer may sign after the key", async () => {
    const other = randomAddress();
    const tx = await wireTransaction(
      facilitator.address,
      [signedBy(key.pubkey, key.destination, 1000), signedBy(other, key.destination, 1000)],
      { lifetime: await latestLifetime(rpc) },
    );
    const report = await signOnly(tx);
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'signers',
      reason: 'signature_slot_empty',
      figures: { account: other },
    });
  });

  it('a fee payer signature given with the payload must verify, and is kept', async () => {
    const unsigned = decode(await facilitated(1000));
    const byFacilitator = await partiallySignTransaction([facilitator.keyPair], unsigned);
    const wire = Buffer.from(getBase64EncodedWireTransaction(byFacilitator), 'base64');
    const tampered = Buffer.from(wire);
    tampered[1 + 5] = tampered[1 + 5]! ^ 0xff; // slot 0: the fee payer's signature
    const refused = await signOnly(tampered.toString('base64'));
    expect(refused).toMatchObject({
      outcome: 'refused',
      failed_check: 'signers',
      reason: 'invalid_signature',
      figures: { signature_slot: 0, account: facilitator.address },
    });

    const report = await signOnly(wire.toString('base64'));
    expect(report.outcome).toBe('signed');
    const signed = decode(report.signed_transaction!);
    expect(signed.signatures[facilitator.address]).toEqual(byFacilitator.signatures[facilitator.address]);
    // Complete: it can be sent as is; the watcher still finds it by the key's signature.
    const id = getSignatureFromTransaction(signed);
    await rpc.sendTransaction(report.signed_transaction! as never, { encoding: 'base64' }).send();
    await waitConfirmed(rpc, id);
    const final = await finalOf(report.signature!);
    expect(final.outcome).toBe('confirmed');
    expect(final.detail).toContain(`landed as ${id}`);
  });
});

describe('watching', () => {
  it('records confirmed under the key signature with the facilitator id and payer in detail; spend is exact', async () => {
    const base = await spent();
    const keyBefore = await balanceOf(w, key.pubkey);
    const report = await signOnly(await facilitated(7000));
    expect(report.outcome).toBe('signed');
    expect(await spent()).toBe(base + 7000);
    const id = await facilitatorSends(report.signed_transaction!);
    expect(id).not.toBe(report.signature);
    const final = await finalOf(report.signature!);
    expect(final).toMatchObject({ command: 'sign', outcome: 'confirmed', signature: report.signature });
    expect(final.detail).toMatch(
      new RegExp(`^sign_only: landed as ${id}, fee paid by ${facilitator.address} \\(\\d+ lamports\\)$`),
    );
    expect(final.balance_change).toBe(-7000);
    expect(await balanceOf(w, key.pubkey)).toBe(keyBefore - 7000);
    expect(await spent()).toBe(base + 7000);
  });

  it('a transaction that lands with an error is recorded failed, with its id, payer and error; the key lost nothing', async () => {
    const payer = await fundedSigner((a, l) => w.localnet.airdrop(a, l), 2 * SOL);
    // The fee payer also moves 1 SOL of its own (to the key's allowed destination); it signs last.
    const tx = await wireTransaction(
      payer.address,
      [signedBy(key.pubkey, key.destination, 1000), signedBy(payer.address, key.destination, SOL)],
      { lifetime: await latestLifetime(rpc) },
    );
    const report = await signOnly(tx);
    expect(report).toMatchObject({ outcome: 'signed', fee_payer: payer.address, balance_change: -1000 });
    // Meanwhile the fee payer spends most of its SOL, so its own transfer fails once the transaction lands.
    const away = await wireTransaction(payer.address, [transfer(payer, randomAddress(), SOL + SOL / 2)], {
      lifetime: await latestLifetime(rpc),
    });
    const awaySigned = await partiallySignTransaction([payer.keyPair], decode(away));
    await rpc.sendTransaction(getBase64EncodedWireTransaction(awaySigned), { encoding: 'base64' }).send();
    await waitConfirmed(rpc, getSignatureFromTransaction(awaySigned));

    const full = await partiallySignTransaction([payer.keyPair], decode(report.signed_transaction!));
    const id = getSignatureFromTransaction(full);
    await rpc
      .sendTransaction(getBase64EncodedWireTransaction(full), { encoding: 'base64', skipPreflight: true })
      .send();
    const final = await finalOf(report.signature!);
    expect(final).toMatchObject({ outcome: 'failed', balance_change: 0 });
    expect(final.detail).toMatch(
      new RegExp(`^sign_only: landed as ${id}, fee paid by ${payer.address} .*; it failed: `),
    );
  });

  it('a transaction the facilitator never sends ends signed_expired and its reservation is released', async () => {
    const base = await spent();
    const report = await signOnly(await facilitated(SOL / 2));
    expect(report.outcome).toBe('signed');
    expect(await spent()).toBe(base + SOL / 2);
    w.localnet.advanceBlocks(200);
    const final = await finalOf(report.signature!);
    expect(final.outcome).toBe('signed_expired');
    expect(await spent()).toBe(base);
  });

  it('while the node cannot list the key history nothing is expired (the reservation stays); own signs still end', async () => {
    const base = await spent();
    w.localnet.faults.failNext(1_000_000, 'getSignaturesForAddress');
    try {
      const foreign = await signOnly(await facilitated(6000));
      // A key that pays its own fee (bravo) is watched by its signature status, not its history.
      const bravo = w.keys.bravo!;
      const own = await w.engine.sign({
        payload: v2(
          await wireTransaction(bravo.pubkey, [transfer(address(bravo.pubkey), bravo.destination, SOL / 10)], {
            lifetime: await latestLifetime(rpc),
          }),
        ),
        mode: 'sign_only',
        principal: w.operator,
      });
      expect([foreign.outcome, own.outcome]).toEqual(['signed', 'signed']);
      w.localnet.advanceBlocks(200);
      expect((await finalOf(own.signature!)).outcome).toBe('signed_expired');
      await new Promise((r) => setTimeout(r, 30 * w.config.timings.poll_interval_ms));
      expect((await entriesFor(foreign.signature!)).map((e) => e.command)).toEqual(['sign-intent']);
      expect(await spent()).toBe(base + 6000);
      w.localnet.faults.clear();
      expect((await finalOf(foreign.signature!)).outcome).toBe('signed_expired');
      expect(await spent()).toBe(base);
    } finally {
      w.localnet.faults.clear();
    }
  });

  it("a busy key's older transactions are not read: the history is searched from the sign's slot on", async () => {
    // 120 transactions touching the key, all before the sign.
    const sender = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
    const lifetime = await latestLifetime(rpc);
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) {
      const tx = await wireTransaction(sender.address, [transfer(sender, key.pubkey, 1_000_000 + i)], { lifetime });
      const signed = await partiallySignTransaction([sender.keyPair], decode(tx));
      ids.push(await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send());
    }
    await waitConfirmed(rpc, ids[ids.length - 1] as never);
    const listed = await rpc
      .getSignaturesForAddress(address(key.pubkey), { limit: 200, commitment: 'confirmed' })
      .send();
    expect(listed.length).toBeGreaterThanOrEqual(120);

    const reads = () => w.localnet.stats().calls.getTransaction ?? 0;
    const before = reads();
    const report = await signOnly(await facilitated(2000));
    expect(report.outcome).toBe('signed');
    const id = await facilitatorSends(report.signed_transaction!);
    const final = await finalOf(report.signature!);
    expect(final.detail).toContain(`landed as ${id}`);
    // The landed payment (perhaps read again while it was not yet visible), not the 120 before it.
    expect(reads() - before).toBeLessThan(10);
  });

  it('a restart in between resumes the watch from the ledger: landed after the restart', async () => {
    const first = await openEngine(w.config);
    const report = await signOnly(await facilitated(3000), first);
    expect(report.outcome).toBe('signed');
    await first.close();
    const second = await openEngine(w.config);
    try {
      const id = await facilitatorSends(report.signed_transaction!);
      const final = await finalOf(report.signature!);
      expect(final).toMatchObject({ outcome: 'confirmed', balance_change: -3000 });
      expect(final.detail).toContain(`landed as ${id}, fee paid by ${facilitator.address}`);
    } finally {
      await second.close();
    }
  });

  it('a restart in between resumes the watch from the ledger: expired after the restart', async () => {
    const base = await spent();
    const first = await openEngine(w.config);
    const report = await signOnly(await facilitated(4000), first);
    expect(report.outcome).toBe('signed');
    await first.close();
    expect(await spent()).toBe(base + 4000);
    const second = await openEngine(w.config);
    try {
      w.localnet.advanceBlocks(200);
      expect((await finalOf(report.signature!)).outcome).toBe('signed_expired');
      expect(await spent()).toBe(base);
    } finally {
      await second.close();
    }
  });
});
