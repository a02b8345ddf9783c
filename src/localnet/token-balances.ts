/**
 * Token balances of a transaction's accounts, as a node reports them around execution (preTokenBalances /
 * postTokenBalances): one entry per account that is an initialized SPL Token or Token-2022 account, by its index
 * in the transaction's full account list (static keys, then loaded writable, then loaded readonly).
 */
import type { AccountView } from './account-view';
import { readTokenAccount, tokenAmount, type MintLookup, type TokenAmount } from './parsed-accounts';

export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: TokenAmount;
}

export function tokenBalances(accounts: (AccountView | null)[], mintOf: MintLookup): TokenBalance[] {
  const out: TokenBalance[] = [];
  accounts.forEach((acc, accountIndex) => {
    if (!acc) return;
    const token = readTokenAccount(acc.owner, acc.data);
    if (!token) return;
    const decimals = mintOf(token.mint)?.decimals;
    if (decimals === undefined) return;
    out.push({
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: acc.owner,
      uiTokenAmount: tokenAmount(token.amount, decimals),
    });
  });
  return out;
}
