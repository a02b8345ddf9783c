/**
 * The localnet as agent code meets it: real LiteSVM behind the real HTTP endpoint, driven with @solana/kit's RPC
 * client and transaction builders as an agent or a toolkit would (the lookup-table program has no client
 * installed here, so its two instructions are built with kit's codecs). Blocks advance by hand.
 */
import {
  address,
  appendTransactionMessageInstructions,
  compressTransactionMessageUsingAddressLookupTables,
  createSolanaRpc,
  createTransactionMessage,
  fetchAddressesForLookupTables,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getProgramDerivedAddress,
  getU64Encoder,
  lamports,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
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
  getMintToInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { isRecord } from '../../src/util/is-record';
import { lookupTableInstructions } from '../signer/kit-transactions';

const SOL = 1_000_000_000;
const LOOKUP_TABLE_PROGRAM = address('AddressLookupTab1e1111111111111111111111111');
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

let net: Localnet;
let rpc: ReturnType<typeof createSolanaRpc>;
let payer: KeyPairSigner;

beforeAll(async () => {
  net = await startLocalnet({ blockIntervalMs: 0 });
  rpc = createSolanaRpc(net.url);
  payer = await generateKeyPairSigner();
  net.airdrop(payer.address, 100 * SOL);
  net.advanceBlocks(3);
});

afterAll(async () => {
  await net.close();
});

type Compiled = Parameters<typeof getBase64EncodedWireTransaction>[0];

async function build(
  instructions: Instruction[],
  lookupTables: Record<Address, Address[]> = {},
): Promise<ReturnType<typeof signTransactionMessageWithSigners>> {
  const { value: latest } = await rpc.getLatestBlockhash().send();
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => compressTransactionMessageUsingAddressLookupTables(m, lookupTables),
  );
  return signTransactionMessageWithSigners(message);
}

/** Sends as any client would and produces blocks until the transaction is confirmed. */
async function land(tx: Compiled): Promise<Signature> {
  const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  net.advanceBlocks(2);
  const { value } = await rpc.getSignatureStatuses([signature]).send();
  expect(value[0]).toMatchObject({ err: null, confirmationStatus: 'finalized' });
  return signature;
}

describe('address lookup tables', () => {
  it('a table created with the slot getSlot() reports is read back by kit, and a v0 transaction uses it', async () => {
    const recentSlot = await rpc.getSlot().send();
    const [table, bump] = await getProgramDerivedAddress({
      programAddress: LOOKUP_TABLE_PROGRAM,
      seeds: [getAddressEncoder().encode(payer.address), getU64Encoder().encode(recentSlot)],
    });
    const recipients = await Promise.all([1, 2, 3].map(async () => (await generateKeyPairSigner()).address));
    const { create, extend } = lookupTableInstructions(payer, table, recentSlot, bump);
    await land(await build([create]));
    await land(await build([extend(recipients)]));
    net.advanceBlocks(1); // addresses extended in a slot are usable from the next one

    const { value: raw } = await rpc.getAccountInfo(table, { encoding: 'jsonParsed' }).send();
    expect(raw?.data).toMatchObject({
      program: 'address-lookup-table',
      parsed: {
        type: 'lookupTable',
        info: {
          addresses: recipients,
          authority: payer.address,
          deactivationSlot: '18446744073709551615',
          lastExtendedSlotStartIndex: 0,
        },
      },
    });
    const tables = await fetchAddressesForLookupTables([table], rpc);
    expect(tables).toEqual({ [table]: recipients });

    // A v0 transfer to an address only in the table: the transaction carries the table, not the address.
    const transfer = getTransferSolInstruction({
      source: payer,
      destination: recipients[1]!,
      amount: lamports(1_000_000_000n),
    });
    const tx = await build([transfer], tables);
    const signature = await land(tx);
    expect((await rpc.getBalance(recipients[1]!).send()).value).toBe(1_000_000_000n);

    const landed = await rpc
      .getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' })
      .send();
    const message = landed?.transaction.message;
    expect(message && 'addressTableLookups' in message ? message.addressTableLookups : null).toEqual([
      { accountKey: table, writableIndexes: [1], readonlyIndexes: [] },
    ]);
    expect(landed?.meta?.loadedAddresses).toEqual({ writable: [recipients[1]], readonly: [] });
    // The recipient is found by its own history even though it is only in the table.
    const history = await rpc.getSignaturesForAddress(recipients[1]!, { commitment: 'confirmed' }).send();
    expect(history.map((h) => h.signature)).toEqual([signature]);
  });
});

describe('tokens', () => {
  let mint: KeyPairSigner;
  let owner: KeyPairSigner;
  let merchant: KeyPairSigner;
  let ownerAta: Address;
  let merchantAta: Address;

  beforeAll(async () => {
    mint = await generateKeyPairSigner();
    owner = await generateKeyPairSigner();
    merchant = await generateKeyPairSigner();
    const space = getMintSize();
    const rent = await rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
    [ownerAta] = await findAssociatedTokenPda({
      owner: owner.address,
      mint: mint.address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    [merchantAta] = await findAssociatedTokenPda({
      owner: merchant.address,
      mint: mint.address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    await land(
      await build([
        getCreateAccountInstruction({
          payer,
          newAccount: mint,
          lamports: rent,
          space,
          programAddress: TOKEN_PROGRAM_ADDRESS,
        }),
        getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
        await getCreateAssociatedTokenIdempotentInstructionAsync({
          payer,
          owner: owner.address,
          mint: mint.address,
        }),
        await getCreateAssociatedTokenIdempotentInstructionAsync({
          payer,
          owner: merchant.address,
          mint: mint.address,
        }),
        getMintToInstruction({ mint: mint.address, token: ownerAta, mintAuthority: payer, amount: 2_500_000n }),
      ]),
    );
  });

  it('getTokenAccountBalance answers a 6-decimals account in base and UI units', async () => {
    const { value } = await rpc.getTokenAccountBalance(ownerAta).send();
    expect(value).toEqual({ amount: '2500000', decimals: 6, uiAmount: 2.5, uiAmountString: '2.5' });
  });

  it('getAccountInfo and getMultipleAccounts parse token accounts and mints', async () => {
    const { value } = await rpc.getMultipleAccounts([ownerAta, mint.address], { encoding: 'jsonParsed' }).send();
    expect(value[0]?.data).toEqual({
      program: 'spl-token',
      parsed: {
        type: 'account',
        info: {
          isNative: false,
          mint: mint.address,
          owner: owner.address,
          state: 'initialized',
          tokenAmount: { amount: '2500000', decimals: 6, uiAmount: 2.5, uiAmountString: '2.5' },
        },
      },
      space: 165n,
    });
    expect(value[1]?.data).toEqual({
      program: 'spl-token',
      parsed: {
        type: 'mint',
        info: {
          decimals: 6,
          freezeAuthority: null,
          isInitialized: true,
          mintAuthority: payer.address,
          supply: '2500000',
        },
      },
      space: 82n,
    });
    // An account no parser knows comes back base64, as from a node.
    const { value: plain } = await rpc.getAccountInfo(payer.address, { encoding: 'jsonParsed' }).send();
    expect(plain?.data).toEqual(['', 'base64']);
  });

  it('getTokenAccountsByOwner finds the owner’s account by mint and by program', async () => {
    const byMint = await rpc
      .getTokenAccountsByOwner(owner.address, { mint: mint.address }, { encoding: 'jsonParsed' })
      .send();
    expect(byMint.value.map((a) => a.pubkey)).toEqual([ownerAta]);
    const byProgram = await rpc
      .getTokenAccountsByOwner(merchant.address, { programId: TOKEN_PROGRAM_ADDRESS }, { encoding: 'base64' })
      .send();
    expect(byProgram.value.map((a) => a.pubkey)).toEqual([merchantAta]);
  });

  it('getTransaction reports real inner instructions and token balances before and after', async () => {
    const pay = getTransferCheckedInstruction({
      source: ownerAta,
      mint: mint.address,
      destination: merchantAta,
      authority: owner,
      amount: 1_250_000n,
      decimals: 6,
    });
    const signature = await land(await build([pay]));
    const json = await rpc
      .getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' })
      .send();
    const keys = json!.transaction.message.accountKeys;
    type Balances = readonly { accountIndex: number; uiTokenAmount: { amount: string } }[] | null | undefined;
    const balanceOf = (list: Balances, who: Address) =>
      list?.find((b) => keys[b.accountIndex] === who)?.uiTokenAmount.amount;
    expect(balanceOf(json!.meta!.preTokenBalances, ownerAta)).toBe('2500000');
    expect(balanceOf(json!.meta!.postTokenBalances, ownerAta)).toBe('1250000');
    expect(balanceOf(json!.meta!.preTokenBalances, merchantAta)).toBe('0');
    expect(balanceOf(json!.meta!.postTokenBalances, merchantAta)).toBe('1250000');
    expect(json!.meta!.postTokenBalances?.find((b) => keys[b.accountIndex] === merchantAta)).toMatchObject({
      mint: mint.address,
      owner: merchant.address,
      programId: TOKEN_PROGRAM_ADDRESS,
    });

    // Creating an associated token account calls the system and token programs: its inner instructions are real.
    const other = await generateKeyPairSigner();
    const createAta = await getCreateAssociatedTokenIdempotentInstructionAsync({
      payer,
      owner: other.address,
      mint: mint.address,
    });
    const created = await land(await build([createAta]));
    const withInner = await rpc
      .getTransaction(created, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' })
      .send();
    const inner = withInner!.meta!.innerInstructions!;
    expect(inner).toHaveLength(1);
    expect(inner[0]!.index).toBe(0);
    const innerKeys = withInner!.transaction.message.accountKeys;
    const programs = inner[0]!.instructions.map((ix) => innerKeys[ix.programIdIndex]);
    expect(programs).toEqual(expect.arrayContaining([SYSTEM_PROGRAM, TOKEN_PROGRAM_ADDRESS]));
    expect(inner[0]!.instructions.every((ix) => ix.stackHeight === 2)).toBe(true);

    const parsed = await rpc
      .getTransaction(created, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment: 'confirmed' })
      .send();
    expect(parsed!.transaction.message.accountKeys[0]).toEqual({
      pubkey: payer.address,
      signer: true,
      writable: true,
      source: 'transaction',
    });
    const parsedInner = parsed!.meta!.innerInstructions![0]!.instructions as unknown[];
    expect(parsedInner).toEqual(
      expect.arrayContaining([expect.objectContaining({ programId: TOKEN_PROGRAM_ADDRESS })]),
    );

    const history = await rpc.getSignaturesForAddress(owner.address, { limit: 10, commitment: 'confirmed' }).send();
    expect(history[0]).toMatchObject({ signature, err: null, confirmationStatus: 'finalized', memo: null });
  });

  it('simulateTransaction replaces the blockhash, skips signatures, and reports inner instructions and token balances', async () => {
    const pay = getTransferCheckedInstruction({
      source: ownerAta,
      mint: mint.address,
      destination: merchantAta,
      authority: owner,
      amount: 250_000n,
      decimals: 6,
    });
    // Only the fee payer signs: the owner's slot stays empty, as an x402 payer's does before it is signed.
    const { value: latest } = await rpc.getLatestBlockhash().send();
    const unsigned = await partiallySignTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
        (m) =>
          appendTransactionMessageInstructions(
            [{ ...pay, accounts: pay.accounts.map((a) => ({ address: a.address, role: a.role })) }],
            m,
          ),
      ),
    );
    net.advanceBlocks(200); // the blockhash is now expired
    const wire = getBase64EncodedWireTransaction(unsigned);
    expect((await rpc.isBlockhashValid(latest.blockhash).send()).value).toBe(false);

    const sim = await rpc
      .simulateTransaction(wire, {
        encoding: 'base64',
        sigVerify: false,
        replaceRecentBlockhash: true,
        innerInstructions: true,
      })
      .send();
    expect(sim.value.err).toBeNull();
    expect(sim.value.replacementBlockhash.blockhash).toBe((await rpc.getLatestBlockhash().send()).value.blockhash);
    expect(sim.value.innerInstructions).toEqual([]);
    // kit's types do not name the token balances a node adds to a simulation; read them as plain JSON.
    const value: unknown = sim.value;
    const post =
      isRecord(value) && Array.isArray(value.postTokenBalances) ? (value.postTokenBalances as unknown[]) : [];
    const amounts = post.map((b) => (isRecord(b) && isRecord(b.uiTokenAmount) ? b.uiTokenAmount.amount : null));
    expect(amounts.sort()).toEqual(['1000000', '1500000']);

    // Asked to verify, the missing signature is refused as a node refuses it.
    await expect(rpc.simulateTransaction(wire, { encoding: 'base64', sigVerify: true }).send()).rejects.toThrow(
      /signature verification/i,
    );
    // The blockhash the chain hands out now is valid.
    const { value: fresh } = await rpc.getLatestBlockhash().send();
    expect((await rpc.isBlockhashValid(fresh.blockhash).send()).value).toBe(true);
  });
});

test('a method the localnet does not serve is -32601 and named', async () => {
  const res = await fetch(net.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getProgramAccounts', params: [] }),
  });
  expect(await res.json()).toEqual({
    jsonrpc: '2.0',
    error: { code: -32601, message: 'Method not found: getProgramAccounts' },
    id: 1,
  });
});
