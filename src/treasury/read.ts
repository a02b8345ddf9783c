/**
 * A treasury's accounts as the chain holds them: owner, mint, its decimals, the token program that owns both and
 * whether the signer can account for the mint's extensions (what a plan needs), and delegate and delegated amount
 * (what reconciliation compares with the ledger). SPL Token and Token-2022 accounts are read alike: each is decoded
 * by the rules of the program that owns it (src/solana/token-state.ts).
 */
import type { AccountsAtSlot } from '../rpc/types';
import { unaccountedExtension } from '../signer/spl-tokens/extensions';
import { readMint, readTokenAccount } from '../solana/token-state';
import type { TreasuryAccountFacts } from './plan';

/** The reads this needs of a chain client (the CLI's and the watcher's both have it). */
export interface AccountsReader {
  getAccountsData(addresses: string[]): Promise<AccountsAtSlot>;
}

export interface TreasuryAccountState extends TreasuryAccountFacts {
  delegate: string | null;
  delegatedAmount: bigint;
}

/** Each listed account that is a token account, in order; an account missing or not a token account is left out. */
export async function readTreasuryAccounts(
  rpc: AccountsReader,
  accounts: readonly string[],
): Promise<TreasuryAccountState[]> {
  const { accounts: data } = await rpc.getAccountsData([...accounts]);
  const tokens = accounts.flatMap((account, i) => {
    const t = readTokenAccount(data[i] ?? null);
    return t === null ? [] : [{ account, t }];
  });
  const mints = [...new Set(tokens.map(({ t }) => t.mint))];
  const mintData = mints.length === 0 ? [] : (await rpc.getAccountsData(mints)).accounts;
  return tokens.flatMap(({ account, t }) => {
    const mint = readMint(mintData[mints.indexOf(t.mint)] ?? null);
    if (mint === null) return [];
    return [
      {
        account,
        mint: t.mint,
        owner: t.owner,
        decimals: mint.decimals,
        program: t.program,
        mintRefusal: unaccountedExtension(mint),
        delegate: t.delegate,
        delegatedAmount: t.delegatedAmount,
      },
    ];
  });
}
