/**
 * Payload v2 through the real engine: transactions built with @solana/kit as agent code builds them, judged
 * against real LiteSVM behind the real JSON-RPC endpoint, lookup tables created on that chain, and sign-only
 * transactions the test sends itself (or never sends) with the watcher writing their end into the ledger.
 */
import {
  AccountRole,
  address,
  createSolanaRpc,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type Signature,
} from '@solana/kit';
import { openEngine } from '../../src/signer';
import { getAdvanceNonceAccountInstruction } from '@solana-program/system';
import { verifySignature } from '../../src/keys/keypair';
import type { AuditEntry } from '../../src/ledger/types';
import { decodeAddress } from '../../src/util/base58';
import { finalEntry } from '../support/async';
import { randomAddress } from '../support/payloads';
import { balanceOf, makeWorld, type World } from '../support/world';
import {
  createLookupTable,
  fundedSigner,
  latestLifetime,
  transfer,
  waitConfirmed,
  wireTransaction,
  type Rpc,
} from './kit-transactions';

const SOL = 1_000_000_000;
const CAP = 2 * SOL;

let w: World;
let rpc: Rpc;
let key: World['keys'][string];
let outsider: string;
let table: Awaited<ReturnType<typeof createLookupTable>>;

beforeAll(async () => {
  w = await makeWorld({ keys: { alpha: { daily_lamport_cap: CAP }, closed: { sign_only: false } } });
  rpc = createSolanaRpc(w.localnet.url);
  key = w.keys.alpha!;
  outsider = randomAddress();
  const payer = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
  // The allowed destination and a stranger, reachable only through the table.
  table = await createLookupTable(rpc, payer, [key.destination, outsider]);
});

afterAll(async () => {
  await w.close();
});

const v2 = (transaction: string, extra: Record<string, unknown> = {}) => ({
  version: 2,
  transaction,
  summary: 'kit transfer',
  warnings: [],
  ...extra,
});

async function entriesFor(signature: string): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of w.ledger.entries()) if (e.signature === signature) out.push(e);
  return out;
}

const finalOf = (signature: string, timeoutMs = 10_000) => finalEntry(w.ledger, signature, timeoutMs);

async function spent(): Promise<number> {
  const [view] = await w.engine.keyShow({ key: 'alpha', principal: w.operator });
  return view!.spent_or_reserved_24h;
}

describe('lookup tables', () => {
  it('a v0 transfer to an allowed destination found only in the table is confirmed', async () => {
    const before = await balanceOf(w, key.destination);
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 1_000_000)], {
      tables: { [table]: [address(key.destination), address(outsider)] },
      lifetime: await latestLifetime(rpc),
    });
    // The destination is not among the message's own accounts: only the table names it.
    const decoded = getTransactionDecoder().decode(Buffer.from(tx, 'base64'));
    expect(Object.keys(decoded.signatures)).toEqual([key.pubkey]);
    expect(Buffer.from(decoded.messageBytes).includes(Buffer.from(decodeAddress(key.destination)!))).toBe(false);

    const report = await w.engine.sign({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({ outcome: 'confirmed', failed_check: null });
    expect(report.checks).toContain('lookup_tables');
    expect(await balanceOf(w, key.destination)).toBe(before + 1_000_000);
  });

  it('SOL moved past the cap through an account only in the table is refused by the cap', async () => {
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, CAP + SOL)], {
      tables: { [table]: [address(key.destination)] },
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.sign({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'limits',
      reason: 'per_day_cap',
      figures: { cap: CAP },
    });
    expect(report.figures?.requested).toBeGreaterThan(CAP);
  });

  it('a transfer to a destination only in the table and not in transfer_to is refused by the system check', async () => {
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), outsider, 1000)], {
      tables: { [table]: [address(key.destination), address(outsider)] },
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.check({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'system',
      reason: 'transfer_destination_not_allowed',
      figures: { instruction: 0, destination: outsider },
    });
  });

  it('a table that does not exist is refused by lookup_tables', async () => {
    const missing = address(randomAddress());
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 1000)], {
      tables: { [missing]: [address(key.destination)] },
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.check({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({ outcome: 'refused', failed_check: 'lookup_tables', reason: 'lookup_table_invalid' });
    expect(report.detail).toBe(`lookup_tables: lookup table ${missing} does not exist`);
  });
});

describe('blockhash', () => {
  it('an expired blockhash is refused by the chain check; replace_blockhash signs it on a fresh one', async () => {
    const lifetime = await latestLifetime(rpc);
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 1000)], {
      version: 'legacy',
      lifetime,
    });
    w.localnet.advanceBlocks(200);
    const refused = await w.engine.sign({ payload: v2(tx), principal: w.operator });
    expect(refused).toMatchObject({
      outcome: 'refused',
      failed_check: 'cluster',
      reason: 'blockhash_expired',
      figures: { blockhash: lifetime.blockhash },
    });
    // The detail says what to do about it.
    expect(refused.detail).toMatch(/fetch a fresh blockhash .* or set replace_blockhash: true/);

    const replaced = await w.engine.sign({ payload: v2(tx, { replace_blockhash: true }), principal: w.operator });
    expect(replaced.outcome).toBe('confirmed');
    const landed = await rpc
      .getTransaction(replaced.signature as Signature, { encoding: 'json', commitment: 'confirmed' })
      .send();
    expect(landed?.transaction.message.recentBlockhash).not.toBe(lifetime.blockhash);
  });

  it('a durable-nonce transaction is refused with a clear message', async () => {
    const advance = getAdvanceNonceAccountInstruction({
      nonceAccount: address(randomAddress()),
      nonceAuthority: { address: address(key.pubkey) } as never,
    });
    const tx = await wireTransaction(
      key.pubkey,
      [
        { ...advance, accounts: advance.accounts.map(({ address: a, role }) => ({ address: a, role })) },
        transfer(address(key.pubkey), key.destination, 1000),
      ],
      { lifetime: await latestLifetime(rpc) },
    );
    const report = await w.engine.check({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'system',
      reason: 'durable_nonce',
      figures: null,
    });
  });
});

describe('signatures', () => {
  it("another signer's signature is kept, and the transaction lands when the test sends it", async () => {
    const cosigner = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
    const tx = await wireTransaction(
      key.pubkey,
      [transfer(address(key.pubkey), key.destination, 1000), transfer(cosigner, key.destination, 2000)],
      { lifetime: await latestLifetime(rpc) },
    );
    const given = getTransactionDecoder().decode(Buffer.from(tx, 'base64'));
    expect(given.signatures[address(key.pubkey)]).toBeNull();
    const report = await w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator });
    expect(report.outcome).toBe('signed');
    const signed = getTransactionDecoder().decode(Buffer.from(report.signed_transaction!, 'base64'));
    expect(Buffer.from(signed.messageBytes).equals(Buffer.from(given.messageBytes))).toBe(true);
    expect(signed.signatures[cosigner.address]).toEqual(given.signatures[cosigner.address]);
    const sent = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
    expect(sent).toBe(report.signature);
    await waitConfirmed(rpc, sent);
    expect((await finalOf(sent)).outcome).toBe('confirmed');
  });

  it('a tampered signature is refused, naming its slot', async () => {
    const cosigner = await fundedSigner((a, l) => w.localnet.airdrop(a, l));
    const tx = await wireTransaction(
      key.pubkey,
      [transfer(address(key.pubkey), key.destination, 1000), transfer(cosigner, key.destination, 2000)],
      { lifetime: await latestLifetime(rpc) },
    );
    // Replacing the blockhash would void the co-signer's signature: refused, never silently re-signed.
    expect(await w.engine.check({ payload: v2(tx, { replace_blockhash: true }), principal: w.operator })).toMatchObject(
      {
        failed_check: 'signers',
        reason: 'replace_blockhash_voids_signature',
        figures: { account: cosigner.address },
      },
    );
    const bytes = Buffer.from(tx, 'base64');
    bytes[1 + 64 + 10] = bytes[1 + 64 + 10]! ^ 0xff; // slot 1: the co-signer's signature
    const report = await w.engine.sign({ payload: v2(bytes.toString('base64')), principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'signers',
      reason: 'invalid_signature',
      figures: { signature_slot: 1, account: cosigner.address },
    });
  });

  it("an empty slot of someone else's is refused: the signer fills only its key's slot", async () => {
    const other = address(randomAddress());
    const ix = transfer(other, key.destination, 1000);
    // `other` must sign the transfer, but nobody has signed for it.
    const accounts = (ix.accounts ?? []).map((a, i) => (i === 0 ? { ...a, role: AccountRole.WRITABLE_SIGNER } : a));
    const tx = await wireTransaction(key.pubkey, [{ ...ix, accounts }], { lifetime: await latestLifetime(rpc) });
    const report = await w.engine.check({ payload: v2(tx), principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'signers',
      reason: 'signature_slot_empty',
      figures: { signature_slot: 1, account: other },
    });
  });
});

describe('sign_only', () => {
  it('returns bytes that verify with the key and land when the test sends them; the ledger ends confirmed', async () => {
    const before = await balanceOf(w, key.destination);
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 5000)], {
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator });
    expect(report).toMatchObject({ outcome: 'signed', failed_check: null });
    expect(report.checks).toEqual(expect.arrayContaining(['simulation', 'cap', 'approval']));
    const signed = getTransactionDecoder().decode(Buffer.from(report.signed_transaction!, 'base64'));
    const sig = signed.signatures[address(key.pubkey)]!;
    expect(verifySignature(decodeAddress(key.pubkey)!, new Uint8Array(signed.messageBytes), new Uint8Array(sig))).toBe(
      true,
    );
    // Not sent by the signer: the intent is there, no final yet.
    expect((await entriesFor(report.signature!)).map((e) => [e.command, e.outcome])).toEqual([
      ['sign-intent', 'pending'],
    ]);
    const sent = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: 'base64' }).send();
    await waitConfirmed(rpc, sent);
    const final = await finalOf(sent);
    expect(final.outcome).toBe('confirmed');
    expect(final.balance_change).toBeLessThanOrEqual(-5000);
    expect(await balanceOf(w, key.destination)).toBe(before + 5000);
  });

  it('an expired sign-only transaction is recorded signed_expired and its reservation is released', async () => {
    const base = await spent();
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, SOL / 2)], {
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator });
    expect(report.outcome).toBe('signed');
    expect(await spent()).toBeGreaterThanOrEqual(base + SOL / 2);
    w.localnet.advanceBlocks(200); // past the blockhash's last valid height, never sent
    const final = await finalOf(report.signature!);
    expect(final.outcome).toBe('signed_expired');
    expect(await spent()).toBe(base);
  });

  it('two engines on one ledger record an expired sign-only transaction once', async () => {
    const tx = await wireTransaction(key.pubkey, [transfer(address(key.pubkey), key.destination, 7000)], {
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator });
    expect(report.outcome).toBe('signed');
    // A second replica starts on the same ledger and resumes watching the same pending intent.
    const replica = await openEngine(w.config);
    try {
      w.localnet.advanceBlocks(200);
      await finalOf(report.signature!);
      await new Promise((r) => setTimeout(r, 20 * w.config.timings.poll_interval_ms));
      const finals = (await entriesFor(report.signature!)).filter((e) => e.command === 'sign');
      expect(finals.map((e) => e.outcome)).toEqual(['signed_expired']);
    } finally {
      await replica.close();
    }
  });

  it('a key with sign_only: false refuses sign_only', async () => {
    const closed = w.keys.closed!;
    const tx = await wireTransaction(closed.pubkey, [transfer(address(closed.pubkey), closed.destination, 1000)], {
      lifetime: await latestLifetime(rpc),
    });
    const report = await w.engine.sign({ payload: v2(tx), mode: 'sign_only', principal: w.operator });
    expect(report).toMatchObject({
      outcome: 'refused',
      failed_check: 'authorized',
      reason: 'sign_only_not_allowed',
      signed_transaction: null,
    });
  });
});
