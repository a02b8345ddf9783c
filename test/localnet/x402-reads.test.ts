/**
 * What a signer and the x402 packages read from the embedded chain around a payment another account pays the fee
 * for: the payer's signer is listed by getSignaturesForAddress (newest first, paged with before/until) though it
 * is not the fee payer, failed transactions are listed with their error, and a simulation asked for inner
 * instructions reports the ones a cross-program call makes (and none when not asked). Driven with @solana/kit.
 */
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
} from '@solana-program/token';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { isRecord } from '../../src/util/is-record';

const SOL = 1_000_000_000;
const SYSTEM_PROGRAM = '11111111111111111111111111111111';

let net: Localnet;
let rpc: ReturnType<typeof createSolanaRpc>;
let facilitator: KeyPairSigner;
let payer: KeyPairSigner;

beforeAll(async () => {
  net = await startLocalnet({ blockIntervalMs: 0 });
  rpc = createSolanaRpc(net.url);
  facilitator = await generateKeyPairSigner();
  payer = await generateKeyPairSigner();
  net.airdrop(facilitator.address, 10 * SOL);
  net.airdrop(payer.address, 10 * SOL);
  net.advanceBlocks(3);
});

afterAll(async () => {
  await net.close();
});

/** Signed by every signer the instructions carry, the facilitator paying the fee. */
async function facilitated(instructions: Instruction[]) {
  const { value: latest } = await rpc.getLatestBlockhash().send();
  return signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(facilitator, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
}

async function land(instructions: Instruction[]): Promise<Signature> {
  const tx = await facilitated(instructions);
  const id = getSignatureFromTransaction(tx);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', skipPreflight: true }).send();
  net.advanceBlocks(2);
  return id;
}

const payment = (amount: number) =>
  getTransferSolInstruction({ source: payer, destination: facilitator.address, amount: lamports(BigInt(amount)) });

describe('getSignaturesForAddress', () => {
  let ids: Signature[];
  let failed: Signature;

  beforeAll(async () => {
    ids = [];
    for (const amount of [1000, 2000, 3000]) ids.push(await land([payment(amount)]));
    // More than the payer has: lands as a failed transaction (the fee is still paid by the facilitator).
    failed = await land([payment(100 * SOL)]);
  });

  it('lists the transactions of a signer that is not the fee payer, newest first, ids being the first signature', async () => {
    const listed = await rpc.getSignaturesForAddress(payer.address, { commitment: 'confirmed' }).send();
    expect(listed.map((s) => s.signature)).toEqual([failed, ...[...ids].reverse()]);
    expect(listed[1]).toMatchObject({ err: null, confirmationStatus: 'finalized', memo: null });
    // The fee payer's signature is the id; the payer's own signature is the transaction's second one.
    const tx = await rpc
      .getTransaction(ids[0]!, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 })
      .send();
    expect(tx!.transaction.signatures[0]).toBe(ids[0]);
    expect(tx!.transaction.message.accountKeys.slice(0, 2)).toEqual([facilitator.address, payer.address]);
  });

  it('lists a failed transaction with its error', async () => {
    const [newest] = await rpc.getSignaturesForAddress(payer.address, { limit: 1, commitment: 'confirmed' }).send();
    expect(newest!.signature).toBe(failed);
    expect(newest!.err).not.toBeNull();
  });

  it('pages with limit, before and until', async () => {
    const page = await rpc
      .getSignaturesForAddress(payer.address, { limit: 2, before: failed, commitment: 'confirmed' })
      .send();
    expect(page.map((s) => s.signature)).toEqual([ids[2], ids[1]]);
    const until = await rpc
      .getSignaturesForAddress(payer.address, { before: failed, until: ids[0], commitment: 'confirmed' })
      .send();
    expect(until.map((s) => s.signature)).toEqual([ids[2], ids[1]]);
  });

  it('refuses commitment processed and a limit over 1000, as a node does', async () => {
    await expect(
      rpc.getSignaturesForAddress(payer.address, { commitment: 'processed' as never }).send(),
    ).rejects.toThrow(/commitment below `confirmed`/);
    await expect(rpc.getSignaturesForAddress(payer.address, { limit: 1001 }).send()).rejects.toThrow(/limit/i);
  });
});

describe('simulateTransaction inner instructions', () => {
  it('reports the System calls an associated-token create makes, and none unless asked', async () => {
    const owner = await generateKeyPairSigner();
    const mintAuthority = await generateKeyPairSigner();
    // A mint to create the account for.
    const mint = await generateKeyPairSigner();
    const space = getMintSize();
    const rent = await rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
    await land([
      getCreateAccountInstruction({
        payer: facilitator,
        newAccount: mint,
        lamports: rent,
        space,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: mintAuthority.address }),
    ]);

    const create = await getCreateAssociatedTokenIdempotentInstructionAsync({
      payer: facilitator,
      owner: owner.address,
      mint: mint.address,
    });
    const wire = getBase64EncodedWireTransaction(await facilitated([create]));
    const asked = await rpc
      .simulateTransaction(wire, { encoding: 'base64', sigVerify: true, innerInstructions: true })
      .send();
    expect(asked.value.err).toBeNull();
    const groups = asked.value.innerInstructions;
    expect(groups.map((g) => g.index)).toEqual([0]);
    const programs = groups[0]!.instructions.map((ix) => ('programId' in ix ? ix.programId : null));
    expect(programs).toEqual(expect.arrayContaining([SYSTEM_PROGRAM, TOKEN_PROGRAM_ADDRESS]));

    const unasked = await rpc.simulateTransaction(wire, { encoding: 'base64', sigVerify: true }).send();
    expect(unasked.value.err).toBeNull();
    // kit's type leaves the field out when it was not asked for; a node answers null.
    const raw: unknown = unasked.value;
    expect(isRecord(raw) ? raw.innerInstructions : 'not a record').toBeNull();
    // Simulated only: the account was not created.
    const [ata] = await findAssociatedTokenPda({
      owner: owner.address,
      mint: mint.address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    expect((await rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value).toBeNull();
  });
});
