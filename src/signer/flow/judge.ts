/**
 * The judgement after a simulation, one for every place a transaction is simulated: `check`, `sign`, and `sign`
 * again after an operator's approval. It puts the simulation's figures on the report, then asks the policy core
 * (policy/decide.ts) about what the simulation says moves: the token policy and the destination lists, whether an
 * operator must approve, and the cap against the usage read before the simulation. That look is a preview: the
 * binding cap decision is the gate's (gate.ts), under the key's lock, on the usage of the moment of sending.
 */
import type { KeyConfig } from '../../config/types';
import type { Usage } from '../../ledger/types';
import type { UsdSpend } from '../../pricing/usd-spend';
import type { Report } from '../report';
import type { CredentialSpend } from '../types';
import { decide } from '../policy/decide';
import type { BudgetFact } from '../policy/rules/credential-budget';
import { recordSimulation, type Figures } from './simulate';
import type { Step } from './step';
import { reportTokens } from './tokens';
import { verdictStep } from './verdict-report';

export function judgeSimulation(
  key: KeyConfig,
  report: Report,
  figures: Figures,
  opts: {
    /** The usage to preview the cap against; null: no preview (unknown, or stale after an approval's wait). */
    usage: Usage | null;
    /** Where this simulation stands in the flow, for a failed simulation's detail (`after approval`). */
    after?: string;
    /** The spend checks of the credential the request came with. */
    credential?: CredentialSpend;
    /** What it takes out of the key in dollars (flow/usd.ts); null: the key is not priced. */
    usd: UsdSpend | null;
    /** The credential's daily budgets with their usage, to preview like the cap (absent: no preview). */
    budgets?: readonly BudgetFact[];
  },
): Step {
  const simulated = recordSimulation(report, figures, opts.after ?? null);
  if (!simulated.ok) return simulated;
  if (!report.checks.includes('simulation')) report.checks.push('simulation');
  // The token figures go on the report whatever refuses: an agent sees what the transaction would move.
  reportTokens(report, figures);
  const verdict = decide(key, {
    at: 'simulated',
    moves: figures,
    usd: opts.usd,
    usage: opts.usage,
    credential: opts.credential,
    ...(opts.budgets ? { budgets: opts.budgets } : {}),
  });
  return verdictStep(report, verdict);
}
