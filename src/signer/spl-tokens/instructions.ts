/**
 * Token program instructions by tag (SPL Token's numbering, which Token-2022 shares up to its extensions): which the
 * signer signs for any key, which only for a key that allows the operation, and which never. Names come from the
 * SPL Token program client.
 */
import { TokenInstruction } from '@solana-program/token';
import type { TokenOp } from '../../config/types';
import { TOKEN_2022_PROGRAM } from '../programs';

/** Moves, burns and account housekeeping: what they move is judged from the simulation. */
const ALLOWED: ReadonlySet<number> = new Set([
  TokenInstruction.InitializeAccount,
  TokenInstruction.Transfer,
  TokenInstruction.Revoke,
  TokenInstruction.Burn,
  TokenInstruction.CloseAccount, // refused after the simulation when the account held tokens (movements.ts)
  TokenInstruction.TransferChecked,
  TokenInstruction.BurnChecked,
  TokenInstruction.InitializeAccount2,
  TokenInstruction.SyncNative,
  TokenInstruction.InitializeAccount3,
  TokenInstruction.GetAccountDataSize,
  TokenInstruction.InitializeImmutableOwner,
  TokenInstruction.AmountToUiAmount,
  TokenInstruction.UiAmountToAmount,
]);

/** Operations that hand control of tokens to someone else (or make new ones): only where the key allows them. */
const GATED: ReadonlyMap<number, TokenOp> = new Map([
  [TokenInstruction.Approve, 'approve'],
  [TokenInstruction.ApproveChecked, 'approve'],
  [TokenInstruction.SetAuthority, 'set_authority'],
  [TokenInstruction.MintTo, 'mint'],
  [TokenInstruction.MintToChecked, 'mint'],
  [TokenInstruction.FreezeAccount, 'freeze'],
  [TokenInstruction.ThawAccount, 'freeze'],
]);

/** Tags from here on differ between the programs (Token-2022's extension instructions). */
const FIRST_DIVERGING_TAG = 25;

export function tokenInstructionVerdict(tag: number): 'allowed' | 'refused' | TokenOp {
  if (tag >= FIRST_DIVERGING_TAG) return 'refused';
  if (ALLOWED.has(tag)) return 'allowed';
  return GATED.get(tag) ?? 'refused';
}

export function tokenInstructionName(tag: number, program: string): string {
  if (tag >= FIRST_DIVERGING_TAG && program === TOKEN_2022_PROGRAM)
    return `${tag} (a Token-2022 extension instruction)`;
  const name = (TokenInstruction as Record<number, string | undefined>)[tag];
  return name === undefined ? `${tag}` : `${tag} (${name})`;
}
