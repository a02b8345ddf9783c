/**
 * What the simulation moved of each mint, as the report shows it (the policy core judges it: policy/decide.ts),
 * and the warning for a mint whose UI amounts are not base units ÷ 10^decimals.
 */
import type { Report } from '../report';
import { uiAmount } from '../../util/token-amounts';
import { uiScaling } from '../spl-tokens/extensions';
import { tokenFigures } from '../policy/rules/tokens';
import type { Figures } from './simulate';

export type TokenFigures = Pick<Figures, 'tokens' | 'mints'>;

export function reportTokens(report: Report, figures: TokenFigures): void {
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
}
