// The embedded chain's side of the x402 example: a USDC-like token (6 decimals) with the agent's and the
// merchant's token accounts, made by a throwaway mint authority funded from the chain's faucet.
//
// Network label: @x402/svm accepts only Solana mainnet, devnet and testnet network ids, and refuses the
// embedded chain's own. The example labels the embedded chain with devnet's id (SOLANA_DEVNET_CAIP2); every RPC
// URL (the agent's, the facilitator's, the signer's) points at the embedded chain. The label is only a label:
// nothing here talks to devnet.
import {
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getSignatureFromTransaction,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  getBase64EncodedWireTransaction,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
} from '@solana-program/token';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';

/** The network id the x402 packages accept, standing for the embedded chain (see above). */
export const NETWORK = SOLANA_DEVNET_CAIP2;
export const DECIMALS = 6;

/** Asks the chain's faucet for lamports and waits until they are there. */
export async function fund(rpc, address, amount) {
  const before = (await rpc.getBalance(address, { commitment: 'confirmed' }).send()).value;
  await rpc.requestAirdrop(address, lamports(BigInt(amount))).send();
  for (let i = 0; i < 500; i++) {
    const now = (await rpc.getBalance(address, { commitment: 'confirmed' }).send()).value;
    if (now > before) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the faucet did not fund ${address}`);
}

/** Sends a transaction its own signers sign (the setup's, not the agent's) and waits until it is confirmed. */
export async function sendAndWait(rpc, feePayer, instructions) {
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
  const signature = getSignatureFromTransaction(tx);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  for (let i = 0; i < 500; i++) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const status = value[0];
    if (status?.err) throw new Error(`setup transaction ${signature} failed: ${JSON.stringify(status.err)}`);
    if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return signature;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`setup transaction ${signature} did not confirm`);
}

/**
 * A new mint with `DECIMALS` decimals, token accounts for the agent (holding `agentAmount` base units) and the
 * merchant, all on the embedded chain. Returns the addresses as strings.
 */
export async function createToken(rpcUrl, { agent, merchant, agentAmount }) {
  const rpc = createSolanaRpc(rpcUrl);
  const authority = await generateKeyPairSigner();
  const mint = await generateKeyPairSigner();
  await fund(rpc, authority.address, 1_000_000_000);
  const space = getMintSize();
  const rent = await rpc.getMinimumBalanceForRentExemption(BigInt(space)).send();
  const [agentAta] = await findAssociatedTokenPda({
    owner: agent,
    mint: mint.address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const [merchantAta] = await findAssociatedTokenPda({
    owner: merchant,
    mint: mint.address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  await sendAndWait(rpc, authority, [
    getCreateAccountInstruction({
      payer: authority,
      newAccount: mint,
      lamports: rent,
      space,
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeMint2Instruction({ mint: mint.address, decimals: DECIMALS, mintAuthority: authority.address }),
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, owner: agent, mint: mint.address }),
    await getCreateAssociatedTokenIdempotentInstructionAsync({ payer: authority, owner: merchant, mint: mint.address }),
    getMintToInstruction({
      mint: mint.address,
      token: agentAta,
      mintAuthority: authority,
      amount: BigInt(agentAmount),
    }),
  ]);
  return { mint: mint.address, agentAta, merchantAta };
}
