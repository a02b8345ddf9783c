/** A balance at `confirmed`, as a number of lamports, through kit's RPC client. */
import { address, type createSolanaRpc } from '@solana/kit';

export async function balanceOf(rpc: ReturnType<typeof createSolanaRpc>, account: string): Promise<number> {
  const { value } = await rpc.getBalance(address(account), { commitment: 'confirmed' }).send();
  return Number(value);
}
