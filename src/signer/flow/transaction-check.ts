/**
 * check for a transaction: the same preflight and simulation as sign, judged the same way on the same figures, so
 * check's outcome is what sign would do; nothing is signed, reserved or sent.
 */
import type { SignerConfig } from '../../config/types';
import type { RpcClient } from '../../rpc/types';
import type { Ledger } from '../../ledger/types';
import type { Report } from '../report';
import type { PreparedTransaction } from '../sources/transaction';
import { credentialBudgets, credentialLimitsUsd, credentialSpendCheck, type CheckInput } from '../types';
import { budgetPreview } from './budget-preview';
import { approvalNeeded } from './approval';
import type { Begun } from './begin';
import { judgeSimulation } from './judge';
import { preflight, type PreflightDeps } from './preflight';
import { simulate } from './simulate';
import { priceReads, pricingFor, spendValue } from './usd';

export interface CheckDeps {
  /** The prices of the policy in force now (a reload may change them); null: none configured. */
  prices: () => SignerConfig['prices'] | null | undefined;
  chain: RpcClient;
  ledger: Ledger;
  preflight: PreflightDeps;
}

/** check of a transaction whose key is settled: its report. */
export async function checkTransaction(deps: CheckDeps, input: CheckInput, begun: Begun): Promise<Report> {
  const { chain } = deps;
  const preflightDeps = deps.preflight;
  const { key, source, report } = begun;
  const checked = await preflight(preflightDeps, { mode: 'check', key, source, report, signal: input.signal });
  if (!checked.ok) return checked.report;
  if (checked.prepared.foreignFeePayer !== null) report.warnings.push(foreignFeePayerNote(checked.prepared));
  const pricing = pricingFor(key, deps.prices() ?? undefined, credentialLimitsUsd(input.principal));
  const figures = await simulate(chain, source.unsigned(checked.prepared), key, 'check', priceReads(pricing));
  // The same judgement sign makes on the same figures, so check's outcome is what sign would do.
  const judged = judgeSimulation(key, report, figures, {
    usage: checked.usageKnown ? checked.usage : null,
    usd: spendValue(pricing, figures),
    credential: credentialSpendCheck(input.principal),
    budgets: await budgetPreview(deps.ledger, credentialBudgets(input.principal)),
  });
  if (figures.sim.err === null) report.logs = figures.sim.logs;
  if (!judged.ok) return judged.report;
  if (checked.usageKnown) report.checks.push('cap');
  if (report.would_need_approval) {
    report.detail = `key "${key.name}" needs ${approvalNeeded(key)} to sign this (sa-forge-signer approvals approve ID)`;
  }
  return report;
}

/** check's note on a transaction another account pays the fee for: what sign will and will not do with it. */
function foreignFeePayerNote(prepared: PreparedTransaction): string {
  return `the fee payer ${prepared.foreignFeePayer ?? ''} is not the key: sign it with mode "sign_only" (the key's slot only); the fee payer signs and sends it`;
}
