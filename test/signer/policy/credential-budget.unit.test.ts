/**
 * A credential block's daily budget at the gate (rules/credential-budget.ts through decide): the block's usage plus
 * this reservation may reach the budget and not pass it; every budgeted block must fit, the key's caps too; the
 * refusal names the block with its figures. The usage is data the gate read under the block's lock.
 */
import { decide } from '../../../src/signer/policy/decide';
import type { GateFacts, SimulatedMoves } from '../../../src/signer/policy/facts';
import type { BudgetFact } from '../../../src/signer/policy/rules/credential-budget';
import { SYSTEM_PROGRAM } from '../../../src/solana/programs';
import type { UsdSpend } from '../../../src/pricing/usd-spend';
import { refusal } from '../../../src/signer/refusals';
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
  per_day_usd_micros: null,
  usage: { lamports: used, unbounded, usdMicros: 0n },
});
const grand = (used: number): BudgetFact => ({
  block: 2,
  revocation_id: 'c2'.repeat(64),
  per_day_lamports: 5_000,
  per_day_usd_micros: null,
  usage: { lamports: used, unbounded: 0, usdMicros: 0n },
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

describe('a daily dollar budget (per_day_usd_micros), on the micro-dollars the intents recorded', () => {
  const dollars = (usedMicros: bigint, unbounded = 0): BudgetFact => ({
    block: 1,
    revocation_id: 'c1'.repeat(64),
    per_day_lamports: null,
    per_day_usd_micros: 20_000_000n,
    usage: { lamports: 0, unbounded, usdMicros: usedMicros },
  });
  const valued = (micros: bigint): UsdSpend => ({ ok: true, usd: micros, valued: [] });

  test('a spend reaching the budget exactly passes; one micro-dollar (or one cent) over is refused with figures', () => {
    expect(gate(400, [dollars(15_000_000n)], { usd: valued(5_000_000n) })).toMatchObject({ outcome: 'allowed' });
    expect(gate(400, [dollars(15_000_000n)], { usd: valued(5_000_001n) })).toMatchObject({
      outcome: 'refused',
      refusal: {
        reason: 'credential_usd_budget',
        check: 'limits',
        figures: {
          block: 1,
          revocation_id: 'c1'.repeat(64),
          usd_spent: '15.00',
          usd_requested: '5.000001',
          usd_cap: '20.00',
        },
      },
    });
    expect(gate(400, [dollars(15_000_000n)], { usd: valued(5_010_000n) })).toMatchObject({
      refusal: { reason: 'credential_usd_budget', figures: { usd_requested: '5.01' } },
    });
  });

  test('a spend that was not valued is refused, never let through a dollar budget', () => {
    expect(gate(400, [dollars(0n)])).toMatchObject({
      refusal: { reason: 'credential_unpriced', figures: { block: 1, requested: 400 } },
    });
    const stale: UsdSpend = { ok: false, refusal: refusal('price_unavailable', 'no price', {}) };
    expect(gate(400, [dollars(0n)], { usd: stale })).toMatchObject({ refusal: { reason: 'credential_unpriced' } });
  });

  test('an intent no figure bounds counts as the whole dollar budget', () => {
    expect(gate(1, [dollars(0n, 1)], { usd: valued(1n) })).toMatchObject({
      refusal: { reason: 'credential_usd_budget', figures: { usd_spent: '20.00' } },
    });
  });

  test('a block with both budgets must fit both; lamport budgets ignore the dollars', () => {
    const both: BudgetFact = { ...dollars(0n), per_day_lamports: 1_000 };
    expect(gate(1_001, [both], { usd: valued(1n) })).toMatchObject({ refusal: { reason: 'credential_budget' } });
    expect(gate(1_000, [both], { usd: valued(20_000_001n) })).toMatchObject({
      refusal: { reason: 'credential_usd_budget' },
    });
    expect(gate(1_000, [both], { usd: valued(20_000_000n) })).toMatchObject({ outcome: 'allowed' });
    expect(gate(400, [child(0)])).toMatchObject({ outcome: 'allowed' });
  });

  test('after the simulation the dollar budget is previewed the same way', () => {
    const simulated = (usd: UsdSpend | null) =>
      decide(key, { at: 'simulated', moves: paying(400), usage: usage(), budgets: [dollars(15_000_000n)], usd });
    expect(simulated(valued(5_000_000n))).toMatchObject({ outcome: 'allowed' });
    expect(simulated(valued(5_000_001n))).toMatchObject({ refusal: { reason: 'credential_usd_budget' } });
    expect(simulated(null)).toMatchObject({ refusal: { reason: 'credential_unpriced' } });
  });
});
