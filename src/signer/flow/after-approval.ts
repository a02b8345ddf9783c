/**
 * The judgement of a sign whose approval is in, on the transaction prepared and simulated again (the approval can
 * outlast its blockhash, and state changes while a person decides). Before the cap gate it must hold three ways:
 *
 * 1. the policy the sign began with (the simulation's figures, the token policy, the destinations);
 * 2. the figures the operators approved: nothing approved ever moves more than was shown (policy/rules/approved-figures.ts);
 * 3. the checks of the credential the request came with, at the moment of the judgement: a credential that expired
 *    while the operators decided sends nothing;
 * 4. the policy in force now: a reload while the operators decided applies to what they decided, so a key removed
 *    or set to deny sends nothing, and the structural checks, the fee cap, the destinations and the token policy of
 *    the new policy are applied too. Where the two policies differ the stricter wins: both must pass, and the gate
 *    checks the caps of both (`capKeys`).
 */
import type { ClusterProfile, KeyConfig } from '../../config/types';
import type { ApprovalRecord } from '../../ledger/types';
import type { Report } from '../report';
import { decide } from '../policy/decide';
import { keyNowRefusal } from '../policy/rules/key-now';
import { feeBound } from '../rules/fee-bound';
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

  const bound = decide(began, {
    at: 'approved',
    approval: input.approval,
    toSend: {
      balanceChange: report.balance_change,
      tokens: report.token_changes ?? [],
      gains: figures.gains,
      programs: input.programs,
      feePayer: report.fee_payer,
    },
  });
  if (bound.outcome === 'refused') return stop(report, bound.refusal);

  const gone = keyNowRefusal(began, current);
  if (gone) return stop(report, gone);
  // A removed key was refused just above: `current` is the key in force now.
  if (current === null || current === began) return { ok: true, capKeys: [began] };
  const structural = decide(current, {
    at: 'structure',
    cluster: input.cluster,
    msg: prepared.msg,
    partialSigners: prepared.partialSigners,
    foreignFeePayer: prepared.foreignFeePayer,
  });
  if (structural.outcome === 'refused') return stop(report, structural.refusal);
  const fee = prepared.foreignFeePayer === null ? feeBound(prepared.msg) : null;
  const feeVerdict = decide(current, { at: 'prepared', fee, usage: null });
  if (feeVerdict.outcome === 'refused') return stop(report, feeVerdict.refusal);
  const now = judgeSimulation(current, report, figures, { usage: null, after, usd: input.usd });
  if (!now.ok) return now;
  return { ok: true, capKeys: [began, current] };
}
