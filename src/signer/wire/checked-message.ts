/**
 * The view of a transaction the policy checks read: every account the message uses (lookup-table accounts
 * resolved, in the runtime's order), the header's signer counts and each instruction by index. Built the same
 * way for a v1 payload and for an agent's own legacy or v0 transaction.
 */
import type { CompiledMessage } from '../compile';
import type { DecodedTransaction } from './decode-transaction';
import type { ResolvedAccounts } from './lookup-tables';

export interface CheckedMessage extends CompiledMessage {
  version: 'legacy' | 0;
  /** Whether the transaction may write each account, by index into accountKeys. */
  writable: boolean[];
  /** Lookup tables the message reads, in order (empty for legacy). */
  lookupTables: string[];
}

export function checkedMessage(tx: DecodedTransaction, accounts: ResolvedAccounts): CheckedMessage {
  const { header } = tx.message;
  return {
    version: tx.version,
    numRequiredSignatures: header.numSignerAccounts,
    numReadonlySigned: header.numReadonlySignerAccounts,
    numReadonlyUnsigned: header.numReadonlyNonSignerAccounts,
    accountKeys: accounts.keys,
    writable: accounts.writable,
    recentBlockhash: tx.message.lifetimeToken,
    instructions: tx.message.instructions.map((ix) => ({
      programIdIndex: ix.programAddressIndex,
      accountIndices: [...(ix.accountIndices ?? [])],
      data: ix.data ? new Uint8Array(ix.data) : new Uint8Array(0),
    })),
    bytes: tx.messageBytes,
    lookupTables:
      tx.message.version === 0 ? (tx.message.addressTableLookups ?? []).map((l) => l.lookupTableAddress) : [],
  };
}
