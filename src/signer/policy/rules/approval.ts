/**
 * With approval `confirm`, whether a spend needs an operator: all of them, or those above a threshold (the lamport
 * one, `approve_above_lamports`, or a spent mint's `approve_above`).
 */
import type { KeyConfig } from '../../../config/types';
import { spendOf } from '../../../ledger/usage-book';
import type { TokenMovements } from '../../spl-tokens/movements';
import { tokensNeedApproval } from './tokens';

export function needsApproval(key: KeyConfig, balanceChange: number | null, tokens: TokenMovements): boolean {
  if (key.approval !== 'confirm') return false;
  const threshold = key.approve_above_lamports ?? null;
  const lamports = threshold === null || balanceChange === null || spendOf(balanceChange) > threshold;
  return lamports || tokensNeedApproval(key, tokens);
}
