/** The audit entries a sign writes: its durable intent before sending, and its final entry after. */
import type { KeyConfig } from '../../config/types';
import type { AuditEntryInput, Ledger, TokenFigure } from '../../ledger/types';
import { errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { EngineLogger } from '../engine-deps';
import type { Report } from '../report';

/** What every entry of one sign shares. */
export interface SignRecord {
  key: KeyConfig;
  payloadHash: string;
  summary: string;
  programs: readonly string[];
  intent: string | null;
  /** Who approved (flow/approval.ts approvalNote), once operators approved it: the final entry names them. */
  approval?: string | null;
  /** The credential that asked (types.ts credentialNote), if one did: every entry of the sign names it. */
  credential?: string | null;
}

/** The entry's own detail with the notes that apply added; as it was when none does. */
function withNotes(detail: string | null, notes: readonly (string | null | undefined)[]): string | null {
  const said = notes.filter((n): n is string => typeof n === 'string' && n !== '');
  return said.length === 0 ? detail : [detail, ...said].filter(Boolean).join('; ');
}

export function signEntry(
  rec: SignRecord,
  rest: Pick<
    AuditEntryInput,
    | 'command'
    | 'outcome'
    | 'detail'
    | 'signature'
    | 'slot'
    | 'balance_change'
    | 'tokens'
    | 'lamport_credits'
    | 'usd_micros'
    | 'usd_prices'
    | 'budget_blocks'
    | 'watch'
  >,
): AuditEntryInput {
  return {
    ts: nowSeconds(),
    key: rec.key.name,
    payload_hash: rec.payloadHash,
    programs: [...rec.programs],
    summary: rec.summary,
    intent: rec.intent,
    ...rest,
    detail: withNotes(rest.detail, [rest.command === 'sign' ? rec.approval : null, rec.credential]),
  };
}

/**
 * A final entry's token figures: what the simulation moved once the transaction landed, nothing for one that failed
 * on chain (a failed transaction moves no tokens), and none recorded otherwise (the intent's reservation then holds
 * where it must: ledger/token-usage.ts).
 */
function finalTokens(report: Report): TokenFigure[] | null {
  if (!report.token_changes || report.token_changes.length === 0) return null;
  if (report.outcome === 'failed') return [];
  if (report.outcome !== 'confirmed') return null;
  return report.token_changes.map(({ mint, decimals, change, credits }) => ({ mint, decimals, change, credits }));
}

/**
 * The final entry. Before anything was sent a failure to write it is the sign's error; once sent, the caller
 * must still get the signature, so the report says the entry is missing (the intent keeps the reservation charged).
 * `landedUsd`: the dollar value the tripwire found the landing worth beyond the intent's (flow/tripwire.ts); the
 * final then records it, as it records the real lamports and tokens.
 */
export async function writeFinal(
  deps: { ledger: Ledger; log: EngineLogger },
  rec: SignRecord,
  report: Report,
  sent: boolean,
  landedUsd: string | null = null,
): Promise<void> {
  try {
    await deps.ledger.append(
      signEntry(rec, {
        command: 'sign',
        outcome: report.outcome,
        detail: report.detail,
        signature: report.signature,
        slot: report.slot,
        balance_change: report.balance_change,
        tokens: finalTokens(report),
        ...(landedUsd === null ? {} : { usd_micros: landedUsd }),
      }),
    );
  } catch (e) {
    if (!sent) throw e;
    const note = `the final audit entry could not be written (${errorMessage(e)}); the intent keeps the reservation charged`;
    report.detail = report.detail ? `${report.detail}; ${note}` : note;
    deps.log.error(
      { key: rec.key.name, signature: report.signature, err: errorMessage(e) },
      'final audit entry not written',
    );
  }
}
