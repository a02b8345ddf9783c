/**
 * The accounts a message may write, in account-list order: the header's counts for a legacy message the signer
 * compiled, the resolved roles (lookup-table accounts included) for an agent's own message.
 */
import type { CompiledMessage } from './compile';

export function writableAccounts(msg: CompiledMessage & { writable?: readonly boolean[] }): string[] {
  const { accountKeys, numRequiredSignatures, numReadonlySigned, numReadonlyUnsigned } = msg;
  const byHeader = (i: number): boolean =>
    i < numRequiredSignatures
      ? i < numRequiredSignatures - numReadonlySigned
      : i < accountKeys.length - numReadonlyUnsigned;
  return accountKeys.filter((_, i) => (msg.writable ? msg.writable[i] === true : byHeader(i)));
}
