/**
 * The judgement of a sign whose approval is in, on the transaction prepared and simulated again (the approval can
 * outlast its blockhash, and state changes while a person decides). Before the cap gate it must hold three ways:
 *
 * 1. the policy the sign began with (the simulation's figures, the token policy, the destinations);
 * 2. the figures the operators approved: nothing approved ever moves more than was shown (rules/approved-figures);
 * 3. the checks of the credential the request came with, at the moment of the judgement: a credential that expired
 *    while the operators decided sends nothing;
 * 4. the policy in force now: a reload while the operators decided applies to what they decided, so a key removed
 *    or set to deny sends nothing, and the structural checks, the fee cap, the destinations and the token policy of
 *    the new policy are applied too. Where the two policies differ the stricter wins: both must pass, and the gate
 *    checks the caps of both (`capKeys`).
 */
import type { ClusterProfile, KeyConfig } from '../../config/types';
import type { ApprovalRecord } from '../../ledger/types';
import { refusal, type Refusal } from '../refusals';
import type { Report } from '../report';
import { approvedFiguresRefusal } from '../rules/approved-figures';
import { decide } from '../policy/decide';
import { feeBound } from '../rules/fee-bound';
import { structuralRefusal } from '../rules/structural';
import type { PreparedTransaction } from '../sources/transaction';
import { judgeSimulation } from './judge';
import type { Figures } from './simulate';
import type { UsdSpend } from '../../pricing/usd-spend';
import { stop, type StepWith } from './step';
import type { CredentialSpend } from '../types';

export interface AfterApprovalInput {
  approval: ApprovalRecord;
  /** The key's policy when the sign began. */
  began: KeyConfig;
  /** The same key in the policy in force now; null when a reload removed it. */
  current: KeyConfig | null;
  cluster: ClusterProfile;
  prepared: PreparedTransaction;
  /** The top-level programs the transaction calls. */
  programs: readonly string[];
  figures: Figures;
  /** What the transaction takes out of the key in dollars, valued on `figures`; null: not priced. */
  usd: UsdSpend | null;
  report: Report;
  /** The spend checks of the credential the request came with, judged again now. */
  credential?: CredentialSpend;
}

/** The key policies whose caps the gate applies: the one the sign began with, and the current one if it differs. */
export type CapKeys = readonly KeyConfig[];

/**
 * What every sign (a transaction or a message) needs of its key in the policy in force after the decision: still
 * configured, and not set to deny.
 */
export function keyNowRefusal(began: KeyConfig, current: KeyConfig | null): Refusal | null {
  if (current === null) {
    return refusal(
      'key_not_authorized',
      `key "${began.name}" was removed from the policy (a reload) while its operators decided: nothing was signed`,
    );
  }
  if (current.approval === 'deny') {
    return refusal('key_set_to_deny', `key "${current.name}" was set to deny (a reload) while its operators decided`);
  }
  return null;
}

export function judgeAfterApproval(input: AfterApprovalInput): StepWith<{ capKeys: CapKeys }> {
  const { began, current, report, figures, prepared } = input;
  const after = 'after approval';
  const judged = judgeSimulation(began, report, figures, {
    usage: null,
    after,
    usd: input.usd,
    credential: input.credential,
  });
  if (!judged.ok) return judged;

  const bound = approvedFiguresRefusal(input.approval, {
    balanceChange: report.balance_change,
    tokens: report.token_changes ?? [],
    gains: figures.gains,
    programs: input.programs,
    feePayer: report.fee_payer,
  });
  if (bound) return stop(report, bound);

  const gone = keyNowRefusal(began, current);
  if (gone) return stop(report, gone);
  // A removed key was refused just above: `current` is the key in force now.
  if (current === null || current === began) return { ok: true, capKeys: [began] };
  const structural = structuralRefusal({
    key: current,
    cluster: input.cluster,
    msg: prepared.msg,
    partialSigners: prepared.partialSigners,
    foreignFeePayer: prepared.foreignFeePayer,
  });
  if (structural) return stop(report, structural);
  const fee = prepared.foreignFeePayer === null ? feeBound(prepared.msg) : null;
  const feeVerdict = decide(current, { at: 'prepared', fee, usage: null });
  if (feeVerdict.outcome === 'refused') return stop(report, feeVerdict.refusal);
  const now = judgeSimulation(current, report, figures, { usage: null, after, usd: input.usd });
  if (!now.ok) return now;
  return { ok: true, capKeys: [began, current] };
}
