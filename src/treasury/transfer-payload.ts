/**
 * A payload v1 in which a treasury key pays as the delegate: a `TransferChecked` from a treasury account with the
 * key as authority (it is not the account's owner). Built with the token program's own instruction builder,
 * addressed to the program that owns the account (TransferChecked is the same in SPL Token and Token-2022), then
 * written in the v1 form (docs/payloads.md).
 */
import { AccountRole, address } from '@solana/kit';
import { getTransferCheckedInstruction } from '@solana-program/token';
import type { KeyConfig } from '../config/types';
import { programId, type TokenProgramName } from '../solana/token-state';
import { SignerError } from '../util/errors';

export function treasuryTransferPayload(opts: {
  key: KeyConfig;
  account: string;
  mint: string;
  destination: string;
  amount: bigint;
  decimals: number;
  /** The program that owns the account (and its mint). */
  program: TokenProgramName;
  summary: string;
}): Record<string, unknown> {
  const { key } = opts;
  if (!(key.treasury?.accounts ?? []).includes(opts.account)) {
    throw new SignerError(
      'request_invalid',
      `token account ${opts.account} is not one of keys.${key.name}.treasury.accounts; pay from a listed one`,
    );
  }
  const ix = getTransferCheckedInstruction(
    {
      source: address(opts.account),
      mint: address(opts.mint),
      destination: address(opts.destination),
      authority: address(key.pubkey),
      amount: opts.amount,
      decimals: opts.decimals,
    },
    { programAddress: address(programId(opts.program)) },
  );
  const signer = (role: AccountRole) => role === AccountRole.READONLY_SIGNER || role === AccountRole.WRITABLE_SIGNER;
  const writable = (role: AccountRole) => role === AccountRole.WRITABLE || role === AccountRole.WRITABLE_SIGNER;
  return {
    version: 1,
    summary: opts.summary,
    warnings: [],
    transaction: {
      fee_payer: key.pubkey,
      signers: [key.pubkey],
      instructions: [
        {
          program_id: ix.programAddress,
          // The authority is the fee payer too; the v1 form marks it a signer as the message will.
          accounts: ix.accounts.map((a) => ({
            pubkey: a.address,
            is_signer: signer(a.role) || a.address === key.pubkey,
            is_writable: writable(a.role) || a.address === key.pubkey,
          })),
          data: [...ix.data],
        },
      ],
    },
    partial_signers: [],
  };
}
