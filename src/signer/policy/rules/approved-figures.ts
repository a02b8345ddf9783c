/**
 * An approval binds what is sent. The operators approved the figures of the request (what the console showed and
 * the passkey signed: the key's spend in lamports and of each mint, who is credited, the programs called, the fee
 * payer); the transaction sent after the approval is simulated again, and must stay within them. State can change
 * while a person decides (a destination closes accounts that an idempotent instruction then recreates at the key's
 * cost), so a second simulation that spends more, credits someone new or more, calls another program or has
 * another fee payer is refused, whatever the caps would allow: nothing approved ever moves more than was shown.
 */
import type { ApprovalRecord, TokenFigure } from '../../../ledger/types';
import { spendOf } from '../../../ledger/usage-book';
import { refusal, type Refusal } from '../../refusals';
import type { LamportGain } from '../../flow/simulate';

/** What the transaction about to be sent does, from its simulation after the approval. */
export interface FiguresToSend {
  balanceChange: number | null;
  tokens: readonly Pick<TokenFigure, 'mint' | 'change' | 'credits'>[];
  gains: readonly Pick<LamportGain, 'address' | 'lamports'>[];
  programs: readonly string[];
  feePayer: string | null;
}

type Approved = Pick<ApprovalRecord, 'id' | 'balance_change' | 'tokens' | 'destinations' | 'programs' | 'fee_payer'>;

/** The approved request, and what the transaction about to be sent does. */
export interface ApprovedFacts {
  approval: Approved;
  toSend: FiguresToSend;
}

const changed = (approval: Approved, what: string, figures: Parameters<typeof refusal>[2]): Refusal =>
  refusal(
    'approval_figures_changed',
    `not sent: after approval ${approval.id} the transaction ${what}, beyond what the operators approved; nothing was sent: sign again to ask for a new approval`,
    { approval_id: approval.id, ...figures },
  );

/** The first way the transaction to send goes beyond the approved figures, or null when it stays within them. */
export function approvedFiguresRefusal(approval: Approved, now: FiguresToSend): Refusal | null {
  if (approval.fee_payer !== undefined && approval.fee_payer !== null && now.feePayer !== approval.fee_payer) {
    return changed(approval, `has fee payer ${String(now.feePayer)}, not ${approval.fee_payer}`, {
      fee_payer: now.feePayer ?? '',
    });
  }
  const programs = new Set(approval.programs ?? []);
  const program = approval.programs ? now.programs.find((p) => !programs.has(p)) : undefined;
  if (program !== undefined) return changed(approval, `calls program ${program}`, { program });

  const approvedSpend = approval.balance_change === null ? null : spendOf(approval.balance_change);
  const spend = now.balanceChange === null ? null : spendOf(now.balanceChange);
  if (spend === null || approvedSpend === null) {
    return changed(approval, 'spends an amount of lamports the simulation does not bound', {});
  }
  if (spend > approvedSpend) {
    return changed(approval, `costs the key ${spend} lamports, not ${approvedSpend}`, {
      requested: spend,
      approved: approvedSpend,
    });
  }

  const approvedTokens = new Map((approval.tokens ?? []).map((t) => [t.mint, t]));
  for (const t of now.tokens) {
    const was = approvedTokens.get(t.mint);
    const spent = tokenSpend(t.change);
    const allowed = was ? tokenSpend(was.change) : 0n;
    if (spent > allowed) {
      return changed(approval, `spends ${spent} base units of mint ${t.mint}, not ${allowed}`, {
        mint: t.mint,
        requested: spent.toString(),
        approved: allowed.toString(),
      });
    }
    const credited = new Map((was?.credits ?? []).map((c) => [c.owner, BigInt(c.amount)]));
    for (const c of t.credits) {
      const approvedCredit = credited.get(c.owner) ?? 0n;
      if (BigInt(c.amount) > approvedCredit) {
        return changed(
          approval,
          `credits ${c.owner} with ${c.amount} base units of mint ${t.mint}, not ${approvedCredit}`,
          {
            mint: t.mint,
            destination: c.owner,
            requested: c.amount,
            approved: approvedCredit.toString(),
          },
        );
      }
    }
  }

  const approvedGains = new Map((approval.destinations ?? []).map((d) => [d.address, d.lamports]));
  for (const g of now.gains) {
    const approvedGain = approvedGains.get(g.address) ?? 0;
    if (g.lamports > approvedGain) {
      return changed(approval, `credits ${g.address} with ${g.lamports} lamports, not ${approvedGain}`, {
        destination: g.address,
        requested: g.lamports,
        approved: approvedGain,
      });
    }
  }
  return null;
}

/** Base units of a mint the key loses (a change is a signed decimal string; a gain spends nothing). */
function tokenSpend(change: string): bigint {
  const n = BigInt(change);
  return n < 0n ? -n : 0n;
}
