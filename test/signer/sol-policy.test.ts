/**
 * The SOL spend policy on the real engine, LiteSVM behind its JSON-RPC endpoint: the fee counted once in the
 * daily total, the per-transaction and fee caps, approval by amount, destinations judged on what the simulation
 * credits (a transfer made by another program through a CPI), and check reporting what sign then does.
 */
import { getAddressEncoder, getProgramDerivedAddress, getU64Encoder, address } from '@solana/kit';
import type { KeyConfig } from '../../src/config/types';
import { COMPUTE_BUDGET_PROGRAM, ED25519_PROGRAM, SYSTEM_PROGRAM } from '../../src/solana/programs';
import type { Report } from '../../src/signer/report';
import { payload, randomAddress, transferInstruction, type PayloadInstruction } from '../support/payloads';
import { makeWorld, type World } from '../support/world';
import type { Reason } from '../../src/signer/refusals';

const FEE = 5000;
const LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';

let w: World;

const keys: Record<string, Partial<KeyConfig>> = {
  ledger: {},
  pertx: { per_tx_lamports: 1_000_000 + FEE },
  feecap: { max_fee_lamports: 10_000 },
  precompile: { max_fee_lamports: 10_000, extra_programs: [ED25519_PROGRAM] },
  gated: { approval: 'confirm', approve_above_lamports: 1_000_000 + FEE },
  agree: {
    per_tx_lamports: 2_000_000 + FEE,
    daily_lamport_cap: 4_000_000,
    approval: 'confirm',
    approve_above_lamports: 1_000_000 + FEE,
  },
  tables: { extra_programs: [LOOKUP_TABLE_PROGRAM] },
};

beforeAll(async () => {
  w = await makeWorld({ keys });
});
afterAll(() => w.close());

const spent = async (name: string): Promise<number> => {
  const [view] = await w.engine.keyShow({ key: name, principal: w.operator });
  return view!.spent_or_reserved_24h;
};

function computeUnitPrice(microLamports: number): PayloadInstruction {
  const data = Buffer.alloc(9);
  data.writeUInt8(3, 0);
  data.writeBigUInt64LE(BigInt(microLamports), 1);
  return { program_id: COMPUTE_BUDGET_PROGRAM, accounts: [], data: [...data] };
}

function computeUnitLimit(units: number): PayloadInstruction {
  const data = Buffer.alloc(5);
  data.writeUInt8(2, 0);
  data.writeUInt32LE(units, 1);
  return { program_id: COMPUTE_BUDGET_PROGRAM, accounts: [], data: [...data] };
}

/** Signs, answering the operator's approval (if one is asked) with approve. */
async function signApproving(p: Record<string, unknown>): Promise<{ report: Report; asked: boolean }> {
  let asked = false;
  const report = await w.engine.sign({
    payload: p,
    principal: w.operator,
    onProgress: (e) => {
      if (e.stage !== 'approval') return;
      asked = true;
      void w.ledger.decideApproval(e.approval_id, 'approved', 'operator', Math.floor(Date.now() / 1000));
    },
  });
  return { report, asked };
}

describe('daily total', () => {
  it('counts the fee once: N sent and sign-only transactions add up to exactly amount + fee each', async () => {
    const sent = [1_000_000, 250_000, 3_333];
    const signedOnly = [700_000, 1];
    for (const amount of sent) {
      const r = await w.engine.sign({ payload: w.transfer('ledger', amount), principal: w.operator });
      expect(r).toMatchObject({ outcome: 'confirmed', balance_change: -(amount + FEE) });
    }
    for (const amount of signedOnly) {
      const r = await w.engine.sign({
        payload: w.transfer('ledger', amount),
        principal: w.operator,
        mode: 'sign_only',
      });
      expect(r.outcome).toBe('signed');
    }
    const intents = (await w.ledger.tail(50)).filter((e) => e.key === 'ledger' && e.command === 'sign-intent');
    expect(intents.map((e) => e.balance_change)).toEqual([...sent, ...signedOnly].map((a) => -(a + FEE)));
    const expected = [...sent, ...signedOnly].reduce((sum, a) => sum + a + FEE, 0);
    expect(await spent('ledger')).toBe(expected);
  });
});

describe('per-transaction cap', () => {
  it('signs a spend at the cap and refuses one lamport more, in check and in sign', async () => {
    const at = await w.engine.sign({ payload: w.transfer('pertx', 1_000_000), principal: w.operator });
    expect(at.outcome).toBe('confirmed');
    const over = w.transfer('pertx', 1_000_001);
    const checked = await w.engine.check({ payload: over, principal: w.operator });
    const signed = await w.engine.sign({ payload: over, principal: w.operator });
    for (const r of [checked, signed]) {
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'limits',
        reason: 'per_tx_cap',
        figures: { requested: 1_000_001 + FEE, cap: 1_000_000 + FEE },
      });
      expect(r.detail).toBe(
        `limits: per-transaction cap: this transaction costs the key ${1_000_001 + FEE} lamports, fee included, more than ${1_000_000 + FEE}`,
      );
    }
  });
});

describe('fee cap', () => {
  it('refuses a priority fee above max_fee_lamports before simulating, and signs a modest one', async () => {
    const k = w.keys.feecap!;
    // 1 000 000 micro-lamports × 10 000 units = 10 000 lamports of priority fee, plus 5 000 for the signature.
    const dear = payload(k.pubkey, [
      computeUnitLimit(10_000),
      computeUnitPrice(1_000_000),
      transferInstruction(k.pubkey, k.destination, 1_000),
    ]);
    for (const r of [
      await w.engine.check({ payload: dear, principal: w.operator }),
      await w.engine.sign({ payload: dear, principal: w.operator }),
    ]) {
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'limits',
        reason: 'fee_cap',
        figures: { requested: 15_000, cap: 10_000 },
        compute_units: null,
      });
      expect(r.checks).not.toContain('simulation');
      expect(r.detail).toMatch(
        /^limits: fee cap: this transaction may pay 15000 lamports in fees \(5000 base \+ 10000 priority/,
      );
    }
    const modest = payload(k.pubkey, [
      computeUnitLimit(10_000),
      computeUnitPrice(100_000), // 1 000 lamports of priority fee
      transferInstruction(k.pubkey, k.destination, 1_000_000),
    ]);
    const r = await w.engine.sign({ payload: modest, principal: w.operator });
    expect(r.outcome).toBe('confirmed');
    expect(r.balance_change).toBe(-(1_000_000 + FEE + 1_000));
  });

  it('counts the signatures a precompile instruction verifies: each is charged the base fee', async () => {
    const k = w.keys.precompile!;
    // An Ed25519 instruction declaring 2 signatures: the runtime charges 3 × 5 000 lamports, over the 10 000 cap.
    const verify: PayloadInstruction = { program_id: ED25519_PROGRAM, accounts: [], data: [2, 0] };
    const r = await w.engine.check({
      payload: payload(k.pubkey, [verify, transferInstruction(k.pubkey, k.destination, 1_000)]),
      principal: w.operator,
    });
    expect(r).toMatchObject({
      outcome: 'refused',
      reason: 'fee_cap',
      figures: { requested: 15_000, cap: 10_000 },
      compute_units: null,
    });
    // The wording is the point: it says the fee is all base fee, from the signatures the precompile verifies.
    expect(r.detail).toMatch(/^limits: fee cap: this transaction may pay 15000 lamports in fees \(15000 base \+ 0/);
  });

  it('bounds a transaction without a unit limit by the default allowance per instruction', async () => {
    const k = w.keys.feecap!;
    // 200 000 default units for the one transfer × 100 000 micro-lamports = 20 000 lamports: over the cap.
    const p = payload(k.pubkey, [computeUnitPrice(100_000), transferInstruction(k.pubkey, k.destination, 1_000)]);
    const r = await w.engine.check({ payload: p, principal: w.operator });
    expect(r).toMatchObject({ outcome: 'refused', reason: 'fee_cap', figures: { requested: 25_000, cap: 10_000 } });
    expect(r.detail).toMatch(/20000 priority/);
  });
});

describe('approval by amount', () => {
  it('signs at or below approve_above_lamports without an operator and asks above it', async () => {
    const small = w.transfer('gated', 1_000_000);
    const checkedSmall = await w.engine.check({ payload: small, principal: w.operator });
    expect(checkedSmall).toMatchObject({ outcome: 'ok', would_need_approval: false });
    const before = (await w.ledger.listApprovals()).length;
    const signedSmall = await signApproving(small);
    expect(signedSmall).toMatchObject({ asked: false, report: { outcome: 'confirmed' } });
    expect((await w.ledger.listApprovals()).length).toBe(before);

    const large = w.transfer('gated', 1_000_001);
    const checkedLarge = await w.engine.check({ payload: large, principal: w.operator });
    expect(checkedLarge).toMatchObject({ outcome: 'ok', would_need_approval: true });
    const signedLarge = await signApproving(large);
    expect(signedLarge).toMatchObject({ asked: true, report: { outcome: 'confirmed' } });
    const [request] = (await w.ledger.listApprovals()).filter((a) => a.key === 'gated');
    expect(request).toMatchObject({ balance_change: -(1_000_001 + FEE), fee: FEE });
  });
});

describe('check and sign agree', () => {
  // One key, in order: per_tx 2 000 000 + fee, daily cap 4 000 000, operator above 1 000 000 + fee.
  // The destination does not exist yet, so the first transfer must cover its rent.
  const cases: {
    amount: number;
    outcome: 'ok' | 'refused';
    reason: Reason | null;
    approval: boolean;
    remaining: number;
  }[] = [
    { amount: 1_000_000, outcome: 'ok', reason: null, approval: false, remaining: 4_000_000 - 1_005_000 },
    {
      amount: 2_000_001,
      outcome: 'refused',
      reason: 'per_tx_cap',
      approval: true,
      remaining: 4_000_000 - 1_005_000 - 2_005_001,
    },
    {
      amount: 1_500_000,
      outcome: 'ok',
      reason: null,
      approval: true,
      remaining: 4_000_000 - 1_005_000 - 1_505_000,
    },
    { amount: 1_490_001, outcome: 'refused', reason: 'per_day_cap', approval: true, remaining: 0 },
    { amount: 1_480_000, outcome: 'ok', reason: null, approval: true, remaining: 5_000 },
    { amount: 1, outcome: 'refused', reason: 'per_day_cap', approval: false, remaining: 0 },
  ];

  it.each(cases.map((c, i) => [i, c] as const))('case %i: check says what sign then does', async (_i, c) => {
    const p = w.transfer('agree', c.amount);
    const checked = await w.engine.check({ payload: p, principal: w.operator });
    const { report: signed, asked } = await signApproving(p);
    expect(checked.outcome).toBe(c.outcome);
    expect(signed.outcome).toBe(c.outcome === 'ok' ? 'confirmed' : 'refused');
    expect(signed.failed_check).toBe(checked.failed_check);
    expect(checked.reason).toBe(c.reason);
    expect(signed.reason).toBe(c.reason);
    expect(signed.figures).toEqual(checked.figures);
    expect(checked.remaining_daily_lamports).toBe(c.remaining);
    expect(signed.remaining_daily_lamports).toBe(c.remaining);
    expect(checked.would_need_approval).toBe(c.approval);
    if (c.outcome === 'ok') expect(asked).toBe(c.approval);
    else {
      expect(asked).toBe(false);
      expect(checked.detail).toBe(signed.detail);
    }
  });
});

describe('destinations from the simulation', () => {
  it('creating an account for a program passes; a program crediting an existing unlisted account is refused', async () => {
    const k = w.keys.tables!;
    const slot = await rpc<number>('getSlot', [{ commitment: 'finalized' }]);
    const [table, bump] = await getProgramDerivedAddress({
      programAddress: address(LOOKUP_TABLE_PROGRAM),
      seeds: [getAddressEncoder().encode(address(k.pubkey)), getU64Encoder().encode(BigInt(slot))],
    });
    const accounts = [
      { pubkey: table, is_signer: false, is_writable: true },
      { pubkey: k.pubkey, is_signer: true, is_writable: false },
      { pubkey: k.pubkey, is_signer: true, is_writable: true },
      { pubkey: SYSTEM_PROGRAM, is_signer: false, is_writable: false },
    ];
    const createData = Buffer.alloc(13);
    createData.writeUInt32LE(0, 0);
    createData.writeBigUInt64LE(BigInt(slot), 4);
    createData.writeUInt8(bump, 12);
    const create = { program_id: LOOKUP_TABLE_PROGRAM, accounts, data: [...createData] };
    const created = await w.engine.sign({ payload: payload(k.pubkey, [create]), principal: w.operator });
    expect(created.outcome).toBe('confirmed');

    // Extending the table makes the key pay its larger rent through the program's call to System: the table
    // gains lamports, and it is not one of the key's destinations.
    const extendData = Buffer.alloc(4 + 8 + 32);
    extendData.writeUInt32LE(2, 0);
    extendData.writeBigUInt64LE(1n, 4);
    Buffer.from(getAddressEncoder().encode(address(randomAddress()))).copy(extendData, 12);
    const extend = payload(k.pubkey, [{ program_id: LOOKUP_TABLE_PROGRAM, accounts, data: [...extendData] }]);
    for (const r of [
      await w.engine.check({ payload: extend, principal: w.operator }),
      await w.engine.sign({ payload: extend, principal: w.operator }),
    ]) {
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'destinations',
        reason: 'destination_not_allowed',
        figures: { destination: table },
        signature: null,
      });
    }
  });
});

async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const res = await fetch(w.localnet.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await res.json()) as { result: T }).result;
}
