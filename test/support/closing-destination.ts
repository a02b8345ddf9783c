/**
 * A destination that closes its token accounts while an approval waits, on the embedded chain: it holds an empty
 * associated token account of each of a few mints, and the agent's payment to it carries a "create if missing" of
 * each, which costs the key nothing while they exist. Closing them (a real transaction the destination signs) makes
 * the same transaction, simulated again, recreate them at the key's cost: the rent goes to the destination.
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
  type KeyPairSigner,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { Localnet } from '../../src/localnet/server';
import { latestLifetime, transfer, waitConfirmed, wireTransaction } from '../signer/kit-transactions';
import { randomAddress } from './payloads';
import { setMint, setTokenAccount } from './tokens';

export interface ClosingDestination {
  /** The destination's keypair: a key's `transfer_to` names its address. */
  signer: KeyPairSigner;
  address: string;
  /** The rent each recreated account costs (a token account's, 165 bytes). */
  rentPerAccount: number;
  accounts: number;
  /** Gives the destination its (empty) accounts. */
  open(): Promise<void>;
  /** The destination closes them and takes their rent. */
  close(): Promise<void>;
  /** How many of its accounts exist now. */
  existing(): Promise<number>;
  /** Payload v2 from `payer`: `lamports` to the destination, and a "create if missing" of each account. */
  paymentWithCreates(payer: string, lamports: number, summary?: string): Promise<Record<string, unknown>>;
}

/** `signer`: the destination's keypair when a config had to name it before the chain ran. */
export async function closingDestination(
  localnet: Localnet,
  opts: { signer?: KeyPairSigner; accounts?: number } = {},
): Promise<ClosingDestination> {
  const rpc = createSolanaRpc(localnet.url);
  const signer = opts.signer ?? (await generateKeyPairSigner());
  const accounts = opts.accounts ?? 10;
  localnet.airdrop(signer.address, 1_000_000_000);
  const mints = Array.from({ length: accounts }, () => setMint(localnet, randomAddress()));
  const ata = async (mint: string): Promise<Address> =>
    (
      await findAssociatedTokenPda({ owner: signer.address, mint: address(mint), tokenProgram: TOKEN_PROGRAM_ADDRESS })
    )[0];
  const rentPerAccount = Number(await rpc.getMinimumBalanceForRentExemption(165n).send());

  return {
    signer,
    address: signer.address,
    rentPerAccount,
    accounts,
    async open() {
      for (const mint of mints) {
        setTokenAccount(localnet, { mint, owner: signer.address, amount: 0n, address: await ata(mint) });
      }
    },
    async close() {
      const closes = await Promise.all(
        mints.map(async (mint) =>
          getCloseAccountInstruction({ account: await ata(mint), destination: signer.address, owner: signer }),
        ),
      );
      const lifetime = await latestLifetime(rpc);
      const tx = await signTransactionMessageWithSigners(
        pipe(
          createTransactionMessage({ version: 0 }),
          (m) => setTransactionMessageFeePayerSigner(signer, m),
          (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
          (m) => appendTransactionMessageInstructions(closes, m),
        ),
      );
      const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
      await waitConfirmed(rpc, signature);
    },
    async existing() {
      const found = await rpc.getMultipleAccounts(await Promise.all(mints.map(ata)), { encoding: 'base64' }).send();
      return found.value.filter((a) => a !== null).length;
    },
    async paymentWithCreates(payer, lamports, summary = 'pay the destination') {
      const creates = await Promise.all(
        mints.map(async (mint) => {
          const ix = getCreateAssociatedTokenIdempotentInstruction({
            payer: { address: address(payer) } as KeyPairSigner,
            ata: await ata(mint),
            owner: signer.address,
            mint: address(mint),
          });
          // The key pays: a signer account with no kit signer attached (the service signs it).
          return { ...ix, accounts: ix.accounts.map(({ address: a, role }) => ({ address: a, role })) };
        }),
      );
      const wire = await wireTransaction(payer, [transfer(address(payer), signer.address, lamports), ...creates], {
        version: 'legacy',
        lifetime: await latestLifetime(rpc),
      });
      return { version: 2, transaction: wire, summary, warnings: [] };
    },
  };
}
