/**
 * Payload v1 is a list of instructions; kit compiles it into a legacy message exactly as it would compile the
 * agent's own. The result is then decoded like any agent-built transaction, so v1 and v2 reach the policy
 * checks through one path and one account order: kit's.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  blockhash,
  compileTransaction,
  createTransactionMessage,
  getTransactionEncoder,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Instruction as KitInstruction,
} from '@solana/kit';
import type { Instruction } from '../payload';
import { decodeWireTransaction, type DecodedTransaction } from './decode-transaction';

function role(isSigner: boolean, isWritable: boolean): AccountRole {
  if (isSigner) return isWritable ? AccountRole.WRITABLE_SIGNER : AccountRole.READONLY_SIGNER;
  return isWritable ? AccountRole.WRITABLE : AccountRole.READONLY;
}

function toKit(ix: Instruction): KitInstruction {
  return {
    programAddress: address(ix.programId),
    accounts: ix.accounts.map((a) => ({ address: address(a.pubkey), role: role(a.isSigner, a.isWritable) })),
    data: ix.data,
  };
}

/** The unsigned legacy transaction of a v1 payload for one blockhash, decoded and shape-checked. */
export function compileV1Transaction(
  feePayer: string,
  instructions: readonly Instruction[],
  lifetime: { blockhash: string; lastValidBlockHeight: number },
): DecodedTransaction {
  const message = pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(address(feePayer), m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: blockhash(lifetime.blockhash), lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions.map(toKit), m),
  );
  const wire = getTransactionEncoder().encode(compileTransaction(message));
  return decodeWireTransaction(new Uint8Array(wire));
}
