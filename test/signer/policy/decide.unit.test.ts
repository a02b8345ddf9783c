/**
 * The policy core's order and figures at each point a flow asks it: the first refusal wins, and the figures the
 * report shows are worked out whatever refuses.
 */
import { localCluster } from '../../../src/config/clusters';
import { decide } from '../../../src/signer/policy/decide';
import type { SimulatedMoves } from '../../../src/signer/policy/facts';
import { SYSTEM_PROGRAM } from '../../../src/solana/programs';
import { randomAddress } from '../../support/payloads';
import { compiled, listed, policyKey, usage } from './fixtures';

const halt = { key: 'k', reason: 'stop', by: 'operator:alice', ts: 1 };
const paying = (lamports: number, to = listed): SimulatedMoves => ({
  balanceChange: -lamports,
  gains: [{ address: to, lamports, created: false, owner: SYSTEM_PROGRAM }],
  tokens: { mints: [], authority: [] },
  mints: new Map(),
});

test('before anything: a halted key is refused', () => {
  expect(decide(policyKey(), { at: 'opened', halt })).toMatchObject({
    outcome: 'refused',
    refusal: { reason: 'halted' },
  });
  expect(decide(policyKey(), { at: 'opened', halt: null })).toEqual({ outcome: 'allowed', passed: [], figures: {} });
});

test('prepared: the fee cap before the rate, the rate before the daily cap; `limits` passes only on a known usage', () => {
  const key = policyKey({ max_fee_lamports: 5_000, rate_limit_per_minute: 1, daily_lamport_cap: 10 });
  const fee = { base: 5_000, priority: 1, total: 5_001 };
  const full = usage({ signsLastMinute: 1, lamports: 10 });
  expect(decide(key, { at: 'prepared', fee, usage: full })).toMatchObject({ refusal: { reason: 'fee_cap' } });
  expect(decide(key, { at: 'prepared', fee: null, usage: full })).toMatchObject({ refusal: { reason: 'rate_limit' } });
  expect(decide(key, { at: 'prepared', fee: null, usage: usage({ lamports: 10 }) })).toMatchObject({
    refusal: { reason: 'per_day_cap' },
  });
  expect(decide(key, { at: 'prepared', fee: null, usage: usage() })).toMatchObject({ passed: ['limits'] });
  expect(decide(key, { at: 'prepared', fee: null, usage: null })).toMatchObject({ outcome: 'allowed', passed: [] });
});

test('simulated: destinations first, then the cap preview with the allowance left, at the cap exactly and above', () => {
  const key = policyKey({ daily_lamport_cap: 1_000, approval: 'confirm', approve_above_lamports: 500 });
  expect(decide(key, { at: 'simulated', moves: paying(400, randomAddress()), usage: usage() })).toMatchObject({
    refusal: { reason: 'destination_not_allowed' },
    figures: {},
  });
  expect(decide(key, { at: 'simulated', moves: paying(400), usage: usage({ lamports: 600 }) })).toEqual({
    outcome: 'allowed',
    passed: ['destinations'],
    figures: { needsApproval: false, reservation: 400, remainingDailyLamports: 0 },
  });
  expect(decide(key, { at: 'simulated', moves: paying(401), usage: usage({ lamports: 600 }) })).toMatchObject({
    outcome: 'refused',
    refusal: { reason: 'per_day_cap', figures: { spent: 600, requested: 401, cap: 1_000 } },
    figures: { needsApproval: false, reservation: 401, remainingDailyLamports: 0 },
  });
  // No usage: no preview, the approval figure only.
  expect(decide(key, { at: 'simulated', moves: paying(501), usage: null })).toEqual({
    outcome: 'allowed',
    passed: ['destinations'],
    figures: { needsApproval: true },
  });
});

test('the gate: in flight first, then the caps of every policy (the smallest allowance), then the halt', () => {
  const began = policyKey({ daily_lamport_cap: 1_000 });
  const now = { ...began, daily_lamport_cap: 700 };
  const facts = (over: object = {}) => ({
    at: 'gate' as const,
    moves: paying(300),
    usage: usage({ lamports: 300 }),
    halt: null,
    signature: 'sig',
    signatureInFlight: false,
    ...over,
  });
  expect(decide([began, now], facts({ signatureInFlight: true, halt }))).toMatchObject({
    refusal: { reason: 'signature_in_flight' },
  });
  expect(decide([began, now], facts())).toEqual({
    outcome: 'allowed',
    passed: ['cap'],
    figures: { reservation: 300, remainingDailyLamports: 100 },
  });
  expect(decide([began, now], facts({ moves: paying(401) }))).toMatchObject({
    refusal: { reason: 'per_day_cap', figures: { cap: 700 } },
  });
  expect(decide([began, now], facts({ halt }))).toMatchObject({ passed: ['cap'], refusal: { reason: 'halted' } });
});

test('the gate counts an unbounded entry as the smallest cap judged', () => {
  const began = policyKey({ daily_lamport_cap: 1_000 });
  const now = { ...began, daily_lamport_cap: 700 };
  const verdict = decide([began, now], {
    at: 'gate',
    moves: paying(1),
    usage: usage({ unbounded: 1 }),
    halt: null,
    signature: null,
    signatureInFlight: false,
  });
  // Under the first policy 700 spent of 1000 leaves room; the second is used up.
  expect(verdict).toMatchObject({ refusal: { reason: 'per_day_cap', figures: { spent: 700, cap: 700 } } });
});

test('a spend the simulation did not report cannot be bounded', () => {
  const moves = { ...paying(1), balanceChange: null };
  expect(decide(policyKey(), { at: 'simulated', moves, usage: usage() })).toMatchObject({
    refusal: { reason: 'spend_unknown' },
  });
});

test('a message: the halt before the rate', () => {
  const key = policyKey({ rate_limit_per_minute: 1 });
  const full = usage({ signsLastMinute: 1 });
  expect(decide(key, { at: 'message', halt, usage: full })).toMatchObject({ refusal: { reason: 'halted' } });
  expect(decide(key, { at: 'message', halt: null, usage: full })).toMatchObject({ refusal: { reason: 'rate_limit' } });
  expect(decide(key, { at: 'message', halt: null, usage: null })).toMatchObject({ outcome: 'allowed', passed: [] });
});

test('the SOL per-destination cap is judged with the caps, after the daily cap', () => {
  const key = policyKey({ daily_lamport_cap: 10_000, per_destination_per_day_lamports: 1_000 });
  const received = new Map([[listed, 600]]);
  expect(decide(key, { at: 'simulated', moves: paying(400), usage: usage({ received }) })).toMatchObject({
    outcome: 'allowed',
  });
  expect(decide(key, { at: 'simulated', moves: paying(401), usage: usage({ received }) })).toMatchObject({
    refusal: { reason: 'per_destination_cap', figures: { received: 600, requested: 401, cap: 1_000 } },
  });
  expect(
    decide(key, { at: 'simulated', moves: paying(401), usage: usage({ received, lamports: 10_000 }) }),
  ).toMatchObject({ refusal: { reason: 'per_day_cap' } });
});

describe('the judgements before the simulation pass the checks the report lists', () => {
  const cluster = localCluster({ rpc_url: 'http://127.0.0.1:1', game_programs: [], player_profile: null });

  test("the cluster's identity passes `cluster`, and refuses as it", () => {
    const genesis = randomAddress();
    const named = { name: 'mainnet', genesis_hash: genesis };
    expect(decide(policyKey(), { at: 'cluster', cluster: named, genesis })).toEqual({
      outcome: 'allowed',
      passed: ['cluster'],
      figures: {},
    });
    expect(decide(policyKey(), { at: 'cluster', cluster: named, genesis: randomAddress() })).toMatchObject({
      outcome: 'refused',
      refusal: { check: 'cluster', reason: 'wrong_cluster' },
    });
  });

  test('the structural checks pass together; the first failing one refuses', () => {
    const key = policyKey();
    const structure = { at: 'structure' as const, cluster, partialSigners: [] };
    expect(decide(key, { ...structure, msg: compiled([key.pubkey], []) })).toMatchObject({
      outcome: 'allowed',
      passed: ['fee_payer', 'programs', 'tokens', 'system', 'vault', 'signers'],
    });
    expect(decide(key, { ...structure, msg: compiled([randomAddress()], []) })).toMatchObject({
      refusal: { reason: 'fee_payer_not_key' },
    });
  });

  test('new accounts, token account owners and message content pass their own checks', () => {
    const key = policyKey();
    expect(decide(key, { at: 'new_accounts', signers: [], exist: [] })).toMatchObject({ passed: ['new_accounts'] });
    expect(decide(key, { at: 'ata_owners', cluster, owners: [], programOwners: [] })).toMatchObject({
      passed: ['ata_owners'],
    });
    expect(decide(key, { at: 'content', lookalike: null, offchain: null })).toMatchObject({ passed: ['message'] });
    expect(decide(key, { at: 'treasury', states: [] })).toEqual({ outcome: 'allowed', passed: [], figures: {} });
  });
});
