/**
 * The token step of check and sign, after the simulation: the report gets what each mint moved, and the policy
 * (tokens/policy.ts) judges the movement — the caps are judged with the lamport cap (gate.ts).
 */
import type { KeyConfig } from '../../config/types';
import type { Refusal } from '../refusals';
import type { Report } from '../report';
import { uiAmount } from '../../util/token-amounts';
import { uiScaling } from '../spl-tokens/extensions';
import { tokenFigures, tokenPolicyRefusal } from '../spl-tokens/policy';
import type { Figures } from './simulate';

export type TokenFigures = Pick<Figures, 'tokens' | 'mints'>;

export function judgeTokens(key: KeyConfig, report: Report, figures: TokenFigures): Refusal | null {
  report.token_changes = tokenFigures(figures.tokens, figures.mints).map((f) => ({
    ...f,
    ui_change: f.decimals === null ? null : uiAmount(BigInt(f.change), f.decimals),
  }));
  for (const [mint, state] of figures.mints) {
    const scaling = uiScaling(state);
    const warning = `mint ${mint} is ${scaling ?? ''}: its UI amount is not base units ÷ 10^decimals, so amounts are shown in base units only`;
    // A sign judges its figures again after an approval: the warning is said once.
    if (scaling !== null && !report.warnings.includes(warning)) report.warnings.push(warning);
  }
  return tokenPolicyRefusal(key, figures.tokens, figures.mints);
}
