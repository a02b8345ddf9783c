/**
 * A credential block's daily budget at the gate (rules/credential-budget.ts through decide): the block's usage plus
 * this reservation may reach the budget and not pass it; every budgeted block must fit, the key's caps too; the
 * refusal names the block with its figures. The usage is data the gate read under the block's lock.
 */
import { decide } from '../../../src/signer/policy/decide';
import type { GateFacts, SimulatedMoves } from '../../../src/signer/policy/facts';
import type { BudgetFact } from '../../../src/signer/policy/rules/credential-budget';
import { SYSTEM_PROGRAM } from '../../../src/solana/programs';
import { listed, policyKey, usage } from './fixtures';

const paying = (lamports: number): SimulatedMoves => ({
  balanceChange: -lamports,
  gains: [{ address: listed, lamports, created: false, owner: SYSTEM_PROGRAM }],
  tokens: { mints: [], authority: [] },
  mints: new Map(),
});

const child = (used: number, unbounded = 0): BudgetFact => ({
  block: 1,
  revocation_id: 'c1'.repeat(64),
  per_day_lamports: 1_000,
  usage: { lamports: used, unbounded },
});
const grand = (used: number): BudgetFact => ({
  block: 2,
  revocation_id: 'c2'.repeat(64),
  per_day_lamports: 5_000,
  usage: { lamports: used, unbounded: 0 },
});

const key = policyKey({ daily_lamport_cap: 1_000_000 });
const gate = (spend: number, budgets: BudgetFact[], over: Partial<GateFacts> = {}) =>
  decide(key, {
    at: 'gate',
    moves: paying(spend),
    usage: usage(),
    halt: null,
    signature: 'sig',
    signatureInFlight: false,
    budgets,
    ...over,
  });

test('a spend reaching the budget exactly passes; one lamport over is refused naming the block with its figures', () => {
  expect(gate(400, [child(600)])).toMatchObject({ outcome: 'allowed', figures: { reservation: 400 } });
  expect(gate(401, [child(600)])).toMatchObject({
    outcome: 'refused',
    refusal: {
      reason: 'credential_budget',
      figures: { block: 1, revocation_id: 'c1'.repeat(64), spent: 600, requested: 401, cap: 1_000 },
    },
  });
});

test('every budgeted block must fit: the first (in block order) that would pass refuses', () => {
  expect(gate(400, [child(600), grand(0)])).toMatchObject({ outcome: 'allowed' });
  expect(gate(401, [child(0), grand(4_600)])).toMatchObject({ refusal: { figures: { block: 2 } } });
  expect(gate(1_001, [child(0), grand(0)])).toMatchObject({ refusal: { figures: { block: 1 } } });
});

test("the key's caps still apply: a spend inside the budget but past the key's daily cap is the key's refusal", () => {
  expect(gate(400, [child(0)], { usage: usage({ lamports: 999_700 }) })).toMatchObject({
    refusal: { reason: 'per_day_cap' },
  });
});

test('an intent no figure bounds counts as the whole budget; a sign moving nothing still fits an unspent budget', () => {
  expect(gate(1, [child(0, 1)])).toMatchObject({ refusal: { reason: 'credential_budget', figures: { spent: 1_000 } } });
  expect(gate(0, [child(1_000)])).toMatchObject({ outcome: 'allowed' });
});

test('no budgets: the gate decides as before', () => {
  expect(gate(500_000, [])).toMatchObject({ outcome: 'allowed' });
});

test('after the simulation the budgets are previewed on the usage read then, after the spend checks and the caps', () => {
  const simulated = (spend: number, budgets: BudgetFact[], keyUsage: ReturnType<typeof usage> | null = usage()) =>
    decide(key, { at: 'simulated', moves: paying(spend), usage: keyUsage, budgets });
  expect(simulated(400, [child(600)])).toMatchObject({ outcome: 'allowed' });
  expect(simulated(401, [child(600)])).toMatchObject({
    outcome: 'refused',
    refusal: { reason: 'credential_budget', figures: { spent: 600, requested: 401, cap: 1_000 } },
  });
  expect(simulated(401, [child(600)], null)).toMatchObject({ refusal: { reason: 'credential_budget' } });
  // The key's own cap refuses first when both would.
  expect(simulated(401, [child(600)], usage({ lamports: 999_700 }))).toMatchObject({
    refusal: { reason: 'per_day_cap' },
  });
});
