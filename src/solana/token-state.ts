/**
 * Token accounts and mints as the token programs store them, read from account data (a simulation's post state or
 * a read pinned to its slot). SPL Token and Token-2022 share the base layouts, which the SPL Token program client
 * decodes (loaded on first use: program-client.ts); a Token-2022 account may carry extensions after them, which only
 * mints are read for (extensions.ts).
 */
import type { Address } from '@solana/addresses';
import { isSome, type Option } from '@solana/options';
import type { Mint, Token } from '@solana-program/token';
import type { AccountData } from '../rpc/types';
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAMS } from './programs';
import { tokenClient } from '../signer/spl-tokens/program-client';

export type TokenProgramName = 'spl-token' | 'token-2022';

/** Base layout sizes; Token-2022 writes the account type at byte 165 of an extended account or mint. */
const ACCOUNT_SIZE = 165;
const MINT_SIZE = 82;
const ACCOUNT_TYPE_OFFSET = 165;
const ACCOUNT_TYPE_MINT = 1;
const ACCOUNT_TYPE_ACCOUNT = 2;

export interface TokenAccountState {
  program: TokenProgramName;
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
  frozen: boolean;
}

export interface MintState {
  program: TokenProgramName;
  decimals: number;
  supply: bigint;
  mintAuthority: string | null;
  freezeAuthority: string | null;
  /** The account's whole data: Token-2022 extensions follow the base layout. */
  data: Uint8Array;
}

export const programName = (programId: string): TokenProgramName | null =>
  programId === SPL_TOKEN_PROGRAM ? 'spl-token' : programId === TOKEN_2022_PROGRAM ? 'token-2022' : null;

export const programId = (name: TokenProgramName): string =>
  name === 'spl-token' ? SPL_TOKEN_PROGRAM : TOKEN_2022_PROGRAM;

const optional = (o: Option<Address>): string | null => (isSome(o) ? o.value : null);

/** What kind of token-program account this data is, by the programs' own layout rules. */
export function tokenKind(owner: string, data: Uint8Array): 'account' | 'mint' | null {
  if (!TOKEN_PROGRAMS.has(owner)) return null;
  const n = data.length;
  if (n === ACCOUNT_SIZE) return 'account';
  if (n === MINT_SIZE) return 'mint';
  if (owner !== TOKEN_2022_PROGRAM || n <= ACCOUNT_TYPE_OFFSET) return null;
  const type = data[ACCOUNT_TYPE_OFFSET];
  return type === ACCOUNT_TYPE_ACCOUNT ? 'account' : type === ACCOUNT_TYPE_MINT ? 'mint' : null;
}

/** A token account's base layout as the program client decodes it, or null when the data is no token account. */
export function decodeTokenAccount(owner: string, data: Uint8Array): Token | null {
  return tokenKind(owner, data) === 'account'
    ? tokenClient().getTokenDecoder().decode(data.subarray(0, ACCOUNT_SIZE))
    : null;
}

/** A mint's base layout as the program client decodes it, or null when the data is no mint. */
export function decodeMint(owner: string, data: Uint8Array): Mint | null {
  return tokenKind(owner, data) === 'mint' ? tokenClient().getMintDecoder().decode(data.subarray(0, MINT_SIZE)) : null;
}

/** The token account this is, or null when it is not an initialised token account. */
export function readTokenAccount(account: AccountData | null): TokenAccountState | null {
  if (account === null) return null;
  const program = programName(account.owner);
  const t = decodeTokenAccount(account.owner, account.data);
  const { AccountState } = tokenClient();
  if (program === null || t === null || t.state === AccountState.Uninitialized) return null;
  return {
    program,
    mint: t.mint,
    owner: t.owner,
    amount: t.amount,
    delegate: optional(t.delegate),
    delegatedAmount: t.delegatedAmount,
    closeAuthority: optional(t.closeAuthority),
    frozen: t.state === AccountState.Frozen,
  };
}

/** The mint this is, or null when it is not an initialised mint. */
export function readMint(account: AccountData | null): MintState | null {
  if (account === null) return null;
  const program = programName(account.owner);
  const m = decodeMint(account.owner, account.data);
  if (program === null || m === null || !m.isInitialized) return null;
  return {
    program,
    decimals: m.decimals,
    supply: m.supply,
    mintAuthority: optional(m.mintAuthority),
    freezeAuthority: optional(m.freezeAuthority),
    data: account.data,
  };
}
