/**
 * Agent-side transaction building for the v2 tests, the way agent code does it with @solana/kit: messages with
 * the signer's key as fee payer (its slot left empty), optional co-signers, and lookup tables created on the
 * embedded chain (the lookup-table program has no kit client for kit 8 here, so its two instructions are built
 * with kit's codecs).
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getArrayEncoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  getStructEncoder,
  getU32Encoder,
  getU64Encoder,
  getU8Encoder,
  lamports,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';

export const LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

export type Rpc = ReturnType<typeof createSolanaRpc>;

export interface Lifetime {
  blockhash: Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0]['blockhash'];
  lastValidBlockHeight: bigint;
}

export async function latestLifetime(rpc: Rpc): Promise<Lifetime> {
  return (await rpc.getLatestBlockhash().send()).value;
}

/** A System transfer of `amount` lamports from `from` (an address, or a co-signer) to `to`. */
export function transfer(from: Address | KeyPairSigner, to: string, amount: number): Instruction {
  const source = typeof from === 'string' ? ({ address: from } as KeyPairSigner) : from;
  const ix = getTransferSolInstruction({ source, destination: address(to), amount: lamports(BigInt(amount)) });
  if (typeof from !== 'string') return ix;
  // The fee payer's own transfer: a signer account with no kit signer attached (the service signs it).
  return { ...ix, accounts: ix.accounts.map(({ address: a, role }) => ({ address: a, role })) };
}

export interface BuildOptions {
  version?: 'legacy' | 0;
  tables?: Record<Address, Address[]>;
  lifetime: Lifetime;
}

/**
 * The base64 wire transaction with `feePayer` (the service's key) paying and its slot empty; co-signers among
 * the instructions' accounts sign it first.
 */
export async function wireTransaction(
  feePayer: string,
  instructions: Instruction[],
  opts: BuildOptions,
): Promise<string> {
  const hasCoSigners = instructions.some((ix) => (ix.accounts ?? []).some((a) => 'signer' in a));
  type Message = Parameters<typeof compileTransaction>[0] &
    Parameters<typeof partiallySignTransactionMessageWithSigners>[0];
  const compile = async (m: Message) =>
    getBase64EncodedWireTransaction(
      hasCoSigners ? await partiallySignTransactionMessageWithSigners(m) : compileTransaction(m),
    );
  if (opts.version === 'legacy') {
    return compile(
      pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayer(address(feePayer), m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(opts.lifetime, m),
        (m) => appendTransactionMessageInstructions(instructions, m),
      ),
    );
  }
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(opts.lifetime, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return compile(opts.tables ? compressTransactionMessageUsingAddressLookupTables(message, opts.tables) : message);
}

/** A funded throwaway payer for the agent's own transactions (tables, co-signing). */
export async function fundedSigner(airdrop: (a: string, l: number) => void, amount = 10_000_000_000) {
  const signer = await generateKeyPairSigner();
  airdrop(signer.address, amount);
  return signer;
}

/** Waits for the status to say confirmed; the bound only ends a wait that failed, it is not the expected time. */
export async function waitConfirmed(rpc: Rpc, signature: Signature, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const s = value[0];
    if (s?.err) {
      const err = JSON.stringify(s.err, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      throw new Error(`transaction ${signature} failed: ${err}`);
    }
    if (s?.confirmationStatus === 'confirmed' || s?.confirmationStatus === 'finalized') return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`transaction ${signature} was not confirmed`);
}

/**
 * The lookup-table program's CreateLookupTable and ExtendLookupTable, encoded with kit's codecs (the program's
 * published kit client lags kit's major version): `payer` is both the table's authority and who pays for it.
 */
export function lookupTableInstructions(
  payer: KeyPairSigner,
  table: Address,
  recentSlot: bigint,
  bump: number,
): { create: Instruction; extend: (addresses: Address[]) => Instruction } {
  const accounts = [
    { address: table, role: AccountRole.WRITABLE },
    { address: payer.address, role: AccountRole.READONLY_SIGNER, signer: payer },
    { address: payer.address, role: AccountRole.WRITABLE_SIGNER, signer: payer },
    { address: SYSTEM_PROGRAM, role: AccountRole.READONLY },
  ];
  return {
    create: {
      programAddress: LOOKUP_TABLE_PROGRAM,
      accounts,
      data: getStructEncoder([
        ['discriminator', getU32Encoder()],
        ['recentSlot', getU64Encoder()],
        ['bump', getU8Encoder()],
      ]).encode({ discriminator: 0, recentSlot, bump }),
    },
    extend: (addresses) => ({
      programAddress: LOOKUP_TABLE_PROGRAM,
      accounts,
      data: getStructEncoder([
        ['discriminator', getU32Encoder()],
        ['addresses', getArrayEncoder(getAddressEncoder(), { size: getU64Encoder() })],
      ]).encode({ discriminator: 2, addresses }),
    }),
  };
}

/**
 * Sends `instructions` in a v0 transaction that `payer` pays and every signer among their accounts signs, outside
 * the signer service (an owner's wallet, a stolen key), and waits until it is confirmed.
 */
export async function sendSigned(rpc: Rpc, payer: KeyPairSigner, instructions: Instruction[]): Promise<Signature> {
  const lifetime = await latestLifetime(rpc);
  const tx = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  const signature = await rpc
    .sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64', skipPreflight: true })
    .send();
  await waitConfirmed(rpc, signature);
  return signature;
}

/** Creates a lookup table holding `addresses` (one transaction: create and extend), usable once this returns. */
export async function createLookupTable(rpc: Rpc, payer: KeyPairSigner, addresses: string[]): Promise<Address> {
  // The slot the table is derived from must still be in the SlotHashes sysvar when the transaction runs (512 slots,
  // about 10 s at the embedded chain's 20 ms blocks): on a machine busy enough to stall this process longer, the
  // program refuses it as InvalidInstructionData, and a fresh slot is the fix.
  for (let attempt = 1; ; attempt++) {
    try {
      return await createLookupTableOnce(rpc, payer, addresses);
    } catch (e) {
      if (attempt >= 3 || !String(e).includes('InvalidInstructionData')) throw e;
    }
  }
}

async function createLookupTableOnce(rpc: Rpc, payer: KeyPairSigner, addresses: string[]): Promise<Address> {
  // The program takes only a slot in the SlotHashes sysvar, which on the embedded chain starts at the first block
  // it made: a confirmed slot the chain has since moved past, never a finalized one from before the chain began.
  const recentSlot = await rpc.getSlot({ commitment: 'confirmed' }).send();
  while ((await rpc.getSlot().send()) <= recentSlot) await new Promise((r) => setTimeout(r, 10));
  const [table, bump] = await getProgramDerivedAddress({
    programAddress: LOOKUP_TABLE_PROGRAM,
    seeds: [getAddressEncoder().encode(payer.address), getU64Encoder().encode(recentSlot)],
  });
  const { create, extend } = lookupTableInstructions(payer, table, recentSlot, bump);
  const lifetime = await latestLifetime(rpc);
  const tx = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions([create, extend(addresses.map((a) => address(a)))], m),
    ),
  );
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  await waitConfirmed(rpc, signature);
  // Addresses extended in a slot are usable from the next one.
  const after = await rpc.getSlot().send();
  while ((await rpc.getSlot().send()) <= after) await new Promise((r) => setTimeout(r, 10));
  return table;
}
