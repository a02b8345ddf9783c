// The embedded chain's side of the x402 example: the network label and the faucet. The token itself is made by
// `sa-forge-signer localnet mint` (README.md here).
//
// Network label: @x402/svm accepts only Solana mainnet, devnet and testnet network ids, and refuses the
// embedded chain's own. The example labels the embedded chain with devnet's id (SOLANA_DEVNET_CAIP2); every RPC
// URL (the agent's, the facilitator's, the signer's) points at the embedded chain. The label is only a label:
// nothing here talks to devnet.
import { lamports } from '@solana/kit';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';

/** The network id the x402 packages accept, standing for the embedded chain (see above). */
export const NETWORK = SOLANA_DEVNET_CAIP2;

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
