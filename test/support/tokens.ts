/**
 * Token fixtures on the embedded chain: mints and token accounts written as account state (the layouts encoded by
 * the SPL Token program client), then moved by the chain's real SPL Token and Token-2022 programs through the
 * signer. A Token-2022 mint can carry extensions, given as (type, value) pairs in the program's TLV layout.
 */
import { address, none, some } from '@solana/kit';
import { AccountState, getMintEncoder, getTokenEncoder } from '@solana-program/token';
import type { Localnet } from '../../src/localnet/server';
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from '../../src/solana/programs';
import { randomAddress, type PayloadInstruction } from './payloads';
import { rpcResult } from './rpc';

export type TokenProgram = 'spl-token' | 'token-2022';
const programId = (p: TokenProgram) => (p === 'spl-token' ? SPL_TOKEN_PROGRAM : TOKEN_2022_PROGRAM);
const RENT = 10_000_000; // comfortably rent-exempt for the sizes below

export interface MintOptions {
  program?: TokenProgram;
  decimals?: number;
  authority?: string;
  /** Token-2022 only: extensions as [type, value bytes]. */
  extensions?: [number, Uint8Array][];
}

/** Writes a mint at `mint` (an address chosen beforehand, so key configs can name it). */
export function setMint(localnet: Localnet, mint: string, opts: MintOptions = {}): string {
  const base = getMintEncoder().encode({
    mintAuthority: opts.authority ? some(address(opts.authority)) : none(),
    supply: 1_000_000_000_000n,
    decimals: opts.decimals ?? 6,
    isInitialized: true,
    freezeAuthority: none(),
  });
  let data = new Uint8Array(base);
  if (opts.extensions && opts.extensions.length > 0) {
    // Base mint, padded to an account's 165 bytes, the account type (1: mint), then type-length-value entries.
    const tlv = opts.extensions.flatMap(([type, value]) => [
      type & 0xff,
      type >> 8,
      value.length & 0xff,
      value.length >> 8,
      ...value,
    ]);
    data = Uint8Array.from([...base, ...new Uint8Array(165 - base.length), 1, ...tlv]);
  }
  localnet.setAccount(mint, { lamports: RENT, owner: programId(opts.program ?? 'spl-token'), data });
  return mint;
}

export function setTokenAccount(
  localnet: Localnet,
  opts: {
    mint: string;
    owner: string;
    amount: bigint;
    program?: TokenProgram;
    address?: string;
    /** A delegate approved for `delegatedAmount` (a treasury's agent key). */
    delegate?: string;
    delegatedAmount?: bigint;
  },
): string {
  // An address given: that account is written over (its amount set anew).
  const account = opts.address ?? randomAddress();
  const data = getTokenEncoder().encode({
    mint: address(opts.mint),
    owner: address(opts.owner),
    amount: opts.amount,
    delegate: opts.delegate === undefined ? none() : some(address(opts.delegate)),
    state: AccountState.Initialized,
    isNative: none(),
    delegatedAmount: opts.delegatedAmount ?? 0n,
    closeAuthority: none(),
  });
  localnet.setAccount(account, {
    lamports: RENT,
    owner: programId(opts.program ?? 'spl-token'),
    data: new Uint8Array(data),
  });
  return account;
}

const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return [...b];
};

/** TransferChecked (12): `owner` signs for `source`. */
export function transferChecked(
  p: { program?: TokenProgram; source: string; mint: string; destination: string; owner: string },
  amount: bigint,
  decimals: number,
): PayloadInstruction {
  return {
    program_id: programId(p.program ?? 'spl-token'),
    accounts: [
      { pubkey: p.source, is_signer: false, is_writable: true },
      { pubkey: p.mint, is_signer: false, is_writable: false },
      { pubkey: p.destination, is_signer: false, is_writable: true },
      { pubkey: p.owner, is_signer: true, is_writable: true },
    ],
    data: [12, ...u64(amount), decimals],
  };
}

/** Approve (4): lets `delegate` spend `amount` from `source`. */
export function approve(source: string, delegate: string, owner: string, amount: bigint): PayloadInstruction {
  return {
    program_id: SPL_TOKEN_PROGRAM,
    accounts: [
      { pubkey: source, is_signer: false, is_writable: true },
      { pubkey: delegate, is_signer: false, is_writable: false },
      { pubkey: owner, is_signer: true, is_writable: true },
    ],
    data: [4, ...u64(amount)],
  };
}

/** A token account's balance as the chain's RPC reports it (base units). */
export async function tokenBalance(rpcUrl: string, account: string): Promise<bigint> {
  const r = await rpcResult<{ value: { amount: string } }>(rpcUrl, 'getTokenAccountBalance', [
    account,
    { commitment: 'confirmed' },
  ]);
  return BigInt(r.value.amount);
}
