/** How the structural rules read an instruction of a prepared message: its program, and its nth account. */
import type { CompiledInstruction, CompiledMessage } from '../../compile';

export const accountOf = (msg: CompiledMessage, ix: CompiledInstruction, n: number): string | undefined => {
  const idx = ix.accountIndices[n];
  return idx === undefined ? undefined : msg.accountKeys[idx];
};

export const programOf = (msg: CompiledMessage, ix: CompiledInstruction): string | undefined =>
  msg.accountKeys[ix.programIdIndex];
