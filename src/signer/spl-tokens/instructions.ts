/**
 * Token program instructions by tag (SPL Token's numbering, which Token-2022 shares up to its extensions): which the
 * signer signs for any key, which only for a key that allows the operation, and which never. Names come from the
 * SPL Token program client, loaded with the first token instruction read (program-client.ts).
 */
import type { TokenOp } from '../../config/types';
import { TOKEN_2022_PROGRAM } from '../../solana/programs';
import { tokenClient } from './program-client';

interface Tables {
  /** Moves, burns and account housekeeping: what they move is judged from the simulation. */
  allowed: ReadonlySet<number>;
  /** Operations that hand control of tokens to someone else (or make new ones): only where the key allows them. */
  gated: ReadonlyMap<number, TokenOp>;
}

let tables: Tables | undefined;

function makeTables(): Tables {
  const { TokenInstruction } = tokenClient();
  const allowed = new Set([
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
  const gated = new Map<number, TokenOp>([
    [TokenInstruction.Approve, 'approve'],
    [TokenInstruction.ApproveChecked, 'approve'],
    [TokenInstruction.SetAuthority, 'set_authority'],
    [TokenInstruction.MintTo, 'mint'],
    [TokenInstruction.MintToChecked, 'mint'],
    [TokenInstruction.FreezeAccount, 'freeze'],
    [TokenInstruction.ThawAccount, 'freeze'],
  ]);
  return { allowed, gated };
}

/** Tags from here on differ between the programs (Token-2022's extension instructions). */
const FIRST_DIVERGING_TAG = 25;

export function tokenInstructionVerdict(tag: number): 'allowed' | 'refused' | TokenOp {
  if (tag >= FIRST_DIVERGING_TAG) return 'refused';
  tables ??= makeTables();
  if (tables.allowed.has(tag)) return 'allowed';
  return tables.gated.get(tag) ?? 'refused';
}

export function tokenInstructionName(tag: number, program: string): string {
  if (tag >= FIRST_DIVERGING_TAG && program === TOKEN_2022_PROGRAM)
    return `${tag} (a Token-2022 extension instruction)`;
  const name = (tokenClient().TokenInstruction as Record<number, string | undefined>)[tag];
  return name === undefined ? `${tag}` : `${tag} (${name})`;
}
