/**
 * The check and sign flows on the real LiteSVM chain through its JSON-RPC endpoint, with real key files
 * and a real SQLite ledger.
 */
import { balanceOf, makeWorld, type World } from '../support/world';
import { keypair, payload, randomAddress, transferInstruction } from '../support/payloads';
import { ASSOCIATED_TOKEN_PROGRAM, SPL_TOKEN_PROGRAM, SYSTEM_PROGRAM } from '../../src/solana/programs';
import { SignerError } from '../../src/util/errors';
import { createEngine } from '../../src/signer/engine';
import { JsonRpcClient } from '../../src/rpc/rpc-client';

const FEE = 5000;

describe('check', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ keys: { alpha: {}, beta: {}, gamma: { approval: 'deny' }, delta: { approval: 'confirm' } } });
  });
  afterAll(() => w.close());

  it('passes a transfer with every check and the simulated balance change, and writes nothing', async () => {
    const r = await w.engine.check({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    expect(r.outcome).toBe('ok');
    expect(r.checks).toEqual([
      'cluster',
      'fee_payer',
      'programs',
      'tokens',
      'system',
      'vault',
      'signers',
      'new_accounts',
      'ata_owners',
      'limits',
      'simulation',
      'destinations',
      'cap',
    ]);
    expect(r.balance_change).toBe(-1_000_000 - FEE);
    expect(r.fee).toBe(FEE);
    expect(r.compute_units).toBeGreaterThan(0);
    expect(r.signature).toBeNull();
    expect(r.logs.length).toBeGreaterThan(0);
    expect(await w.ledger.tail(10)).toEqual([]);
  });

  it('refuses a key the token may not use as authorized, before any RPC', async () => {
    const calls = w.localnet.stats().calls.getGenesisHash ?? 0;
    const r = await w.engine.check({
      payload: w.transfer('alpha', 1),
      principal: { kind: 'token', name: 't', keys: ['beta'] },
    });
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'authorized',
      reason: 'no_key_for_fee_payer',
      figures: { fee_payer: w.keys.alpha!.pubkey },
      key: null,
      detail: `authorized: this token may not use a key with pubkey ${w.keys.alpha!.pubkey} (the payload's fee payer); if one of your keys signs a transaction someone else pays the fee for (x402), name it with the 'key' argument`,
    });
    expect(w.localnet.stats().calls.getGenesisHash ?? 0).toBe(calls);
  });

  it('refuses a named key that is not the payload fee payer as fee_payer', async () => {
    const r = await w.engine.check({ payload: w.transfer('alpha', 1), key: 'beta', principal: w.operator });
    expect(r).toMatchObject({
      failed_check: 'fee_payer',
      reason: 'fee_payer_not_key',
      figures: { fee_payer: w.keys.alpha!.pubkey },
    });
    expect(r.detail).toBe(
      `fee_payer: payload fee payer ${w.keys.alpha!.pubkey} is not key "beta" (${w.keys.beta!.pubkey})`,
    );
  });

  it('refuses a deny key in check too (it previews sign)', async () => {
    const r = await w.engine.check({ payload: w.transfer('gamma', 1), principal: w.operator });
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'approval',
      reason: 'key_set_to_deny',
      figures: null,
      detail: 'approval: key "gamma" is set to deny',
    });
  });

  it('notes that a confirm key will need an operator', async () => {
    const r = await w.engine.check({ payload: w.transfer('delta', 1_000_000), principal: w.operator });
    expect(r.outcome).toBe('ok');
    expect(r.detail).toMatch(/needs an operator's approval/);
  });

  it('refuses a partial signer that already exists on-chain as new_accounts', async () => {
    const fresh = keypair();
    const alpha = w.keys.alpha!;
    const ix = {
      program_id: SYSTEM_PROGRAM,
      accounts: [
        { pubkey: alpha.pubkey, is_signer: true, is_writable: true },
        { pubkey: alpha.destination, is_signer: false, is_writable: true },
        { pubkey: fresh.pubkey, is_signer: true, is_writable: false },
      ],
      data: transferInstruction(alpha.pubkey, alpha.destination, 1_000_000).data,
    };
    const p = payload(alpha.pubkey, [ix], { partial_signers: [fresh.base64] });
    expect((await w.engine.check({ payload: p, principal: w.operator })).checks).toContain('new_accounts');
    w.localnet.airdrop(fresh.pubkey, 1_000_000);
    const r = await w.engine.check({ payload: p, principal: w.operator });
    expect(r).toMatchObject({
      failed_check: 'new_accounts',
      reason: 'partial_signer_exists',
      figures: { account: fresh.pubkey },
      detail: `new_accounts: partial signer ${fresh.pubkey} already exists on-chain`,
    });
  });

  it('refuses a token account created for a stranger as ata_owners', async () => {
    const alpha = w.keys.alpha!;
    const stranger = randomAddress();
    const ata = {
      program_id: ASSOCIATED_TOKEN_PROGRAM,
      accounts: [alpha.pubkey, randomAddress(), stranger, randomAddress(), SYSTEM_PROGRAM, SPL_TOKEN_PROGRAM].map(
        (pubkey, i) => ({ pubkey, is_signer: i === 0, is_writable: i < 2 }),
      ),
      data: [1],
    };
    const r = await w.engine.check({ payload: payload(alpha.pubkey, [ata]), principal: w.operator });
    expect(r).toMatchObject({
      failed_check: 'ata_owners',
      reason: 'ata_owner_not_allowed',
      figures: { account: stranger },
    });
  });

  it("refuses a chain whose genesis is not the cluster's as cluster", async () => {
    const other = await makeWorld();
    try {
      const wrong = {
        ...other.config,
        cluster: {
          ...other.config.cluster,
          name: 'zink-testnet',
          genesis_hash: '6qaAozzun2WV83PRDgqf79WXtbqfnezKB3demjxXV5EY',
        },
      };
      const engine = createEngine({
        config: wrong,
        ledger: other.ledger,
        chain: new JsonRpcClient(other.localnet.url, { timeoutMs: 2000 }),
      });
      const r = await engine.check({ payload: other.transfer('alpha', 1), principal: other.operator });
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'cluster',
        reason: 'wrong_cluster',
        figures: { genesis_hash: other.localnet.genesisHash },
        detail: `cluster: RPC genesis hash ${other.localnet.genesisHash} is not zink-testnet`,
      });
    } finally {
      await other.close();
    }
  });

  it('reports a simulation failure with the program error and sends nothing', async () => {
    const sends = w.localnet.stats().sends;
    const r = await w.engine.check({ payload: w.transfer('beta', 900_000_000_000), principal: w.operator });
    expect(r).toMatchObject({ outcome: 'simulation_failed', reason: 'simulation_failed' });
    expect(r.error).toEqual({ InstructionError: [0, { Custom: 1 }] });
    expect(r.program_error).toMatch(/failed: custom program error: 0x1|insufficient/);
    expect(w.localnet.stats().sends).toBe(sends);
  });

  it('rejects a payload that does not parse with a payload_invalid error, and an unknown key with key_unknown', async () => {
    await expect(w.engine.check({ payload: { version: 2 }, principal: w.operator })).rejects.toMatchObject({
      code: 'payload_invalid',
    });
    await expect(
      w.engine.check({ payload: w.transfer('alpha', 1), key: 'nope', principal: w.operator }),
    ).rejects.toBeInstanceOf(SignerError);
    await expect(
      w.engine.check({
        payload: payload(randomAddress(), [transferInstruction(randomAddress(), randomAddress(), 1)]),
        principal: w.operator,
      }),
    ).rejects.toMatchObject({ code: 'key_unknown' });
  });
});

describe('sign', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({
      keys: {
        alpha: {},
        beta: {},
        capped: { daily_lamport_cap: 2 * (1_000_000 + FEE) },
        rated: { rate_limit_per_minute: 2 },
      },
    });
  });
  afterAll(() => w.close());

  it('confirms a transfer, moves the balances and leaves an intent and a final entry', async () => {
    const alpha = w.keys.alpha!;
    const before = await balanceOf(w, alpha.pubkey);
    const r = await w.engine.sign({
      payload: w.transfer('alpha', 2_000_000),
      intent: 'pay the fleet',
      principal: w.operator,
    });
    expect(r.outcome).toBe('confirmed');
    expect(r.checks).toEqual([
      'cluster',
      'fee_payer',
      'programs',
      'tokens',
      'system',
      'vault',
      'signers',
      'new_accounts',
      'ata_owners',
      'limits',
      'simulation',
      'destinations',
      'approval',
      'cap',
    ]);
    expect(r.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(r.slot).toBeGreaterThan(0);
    expect(r.balance_change).toBe(-2_000_000 - FEE);
    expect(r.fee).toBe(FEE);
    expect(await balanceOf(w, alpha.pubkey)).toBe(before - 2_000_000 - FEE);
    expect(await balanceOf(w, alpha.destination)).toBe(2_000_000);
    const entries = (await w.ledger.tail(2)).filter((e) => e.key === 'alpha');
    expect(entries.map((e) => [e.command, e.outcome, e.signature])).toEqual([
      ['sign-intent', 'pending', r.signature],
      ['sign', 'confirmed', r.signature],
    ]);
    expect(entries[0]!.balance_change).toBe(-(2_000_000 + FEE)); // the intent reserves what the key loses
    expect(entries[1]!.intent).toBe('pay the fleet');
    expect(await w.ledger.verify()).toEqual({ ok: true, entries: 2 });
  });

  it('lets two signs reach the daily cap exactly and refuses the third as limits', async () => {
    const first = await w.engine.sign({ payload: w.transfer('capped', 1_000_000), principal: w.operator });
    const second = await w.engine.sign({ payload: w.transfer('capped', 1_000_000), principal: w.operator });
    expect([first.outcome, second.outcome]).toEqual(['confirmed', 'confirmed']);
    const third = await w.engine.sign({ payload: w.transfer('capped', 1), principal: w.operator });
    expect(third).toMatchObject({
      outcome: 'refused',
      failed_check: 'limits',
      reason: 'per_day_cap',
      figures: { spent: 2_000_000 + 2 * FEE, cap: 2_000_000 + 2 * FEE },
    });
  });

  it("refuses a sign that would pass the cap, naming this transaction's reservation", async () => {
    const w2 = await makeWorld({ keys: { alpha: { daily_lamport_cap: 1_500_000 } } });
    try {
      expect((await w2.engine.sign({ payload: w2.transfer('alpha', 1_000_000), principal: w2.operator })).outcome).toBe(
        'confirmed',
      );
      const r = await w2.engine.sign({ payload: w2.transfer('alpha', 1_000_000), principal: w2.operator });
      expect(r).toMatchObject({
        failed_check: 'limits',
        reason: 'per_day_cap',
        figures: { spent: 1_000_000 + FEE, requested: 1_000_000 + FEE, cap: 1_500_000 },
      });
      // The confirmed sign now counts its actual change, not its reservation.
      expect(r.detail).toBe(
        `limits: daily cap: ${1_000_000 + FEE} lamports spent or reserved in 24 h, plus ${1_000_000 + FEE} for this transaction, exceeds 1500000`,
      );
    } finally {
      await w2.close();
    }
  });

  it('enforces the per-minute rate on what was sent', async () => {
    const outcomes = [];
    for (let i = 0; i < 3; i++)
      outcomes.push(await w.engine.sign({ payload: w.transfer('rated', 1_000_000 + i), principal: w.operator }));
    expect(outcomes.map((r) => r.outcome)).toEqual(['confirmed', 'confirmed', 'refused']);
    expect(outcomes[2]).toMatchObject({ reason: 'rate_limit', figures: { signs_last_minute: 2, cap: 2 } });
    expect(outcomes[2]!.detail).toBe('limits: rate limit: 2 signs in the last minute');
  });

  it('refuses a simulation failure with its program error, writing a final entry and no intent', async () => {
    const r = await w.engine.sign({ payload: w.transfer('beta', 900_000_000_000), principal: w.operator });
    expect(r).toMatchObject({ outcome: 'simulation_failed', reason: 'simulation_failed', failed_check: null });
    expect(r.program_error).not.toBeNull();
    const last = (await w.ledger.tail(1))[0]!;
    expect([last.command, last.outcome, last.signature]).toEqual(['sign', 'simulation_failed', null]);
  });

  it('neither locks nor writes for a token that may not use the key', async () => {
    const before = (await w.ledger.tail(1000)).length;
    const r = await w.engine.sign({
      payload: w.transfer('alpha', 1),
      principal: { kind: 'token', name: 't', keys: ['beta'] },
    });
    expect(r).toMatchObject({ failed_check: 'authorized', reason: 'no_key_for_fee_payer' });
    expect((await w.ledger.tail(1000)).length).toBe(before);
  });
});

describe('halt', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ keys: { alpha: {}, beta: {} } });
  });
  afterAll(() => w.close());

  it('refuses check and sign on a halted key until an operator resumes it', async () => {
    const token = { kind: 'token', name: 'agent', keys: ['alpha'] } as const;
    const result = await w.engine.halt({ key: 'alpha', reason: 'looping agent', principal: token });
    expect(result.halted.map((h) => [h.key, h.by, h.reason])).toEqual([['alpha', 'token:agent', 'looping agent']]);
    const refused = await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator });
    expect(refused).toMatchObject({
      outcome: 'refused',
      failed_check: 'halted',
      reason: 'halted',
      figures: { by: 'token:agent' },
    });
    expect(refused.detail).toMatch(
      /halted by token:agent .*looping agent; only an operator can release it \(sa-forge-signer resume alpha\)/,
    );
    expect((await w.engine.check({ payload: w.transfer('alpha', 1_000_000), principal: w.operator })).reason).toBe(
      'halted',
    );
    expect((await w.engine.sign({ payload: w.transfer('beta', 1_000_000), principal: w.operator })).outcome).toBe(
      'confirmed',
    );
    expect((await w.engine.keyShow({ key: 'alpha', principal: token }))[0]!.halted).toMatchObject({
      reason: 'looping agent',
    });
    expect(await w.engine.resume('alpha')).toBe(true);
    expect((await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator })).outcome).toBe(
      'confirmed',
    );
    const commands = (await w.ledger.tail(100)).filter((e) => e.key === 'alpha').map((e) => e.command);
    expect(commands.slice(0, 2)).toEqual(['halt', 'sign']);
    expect(commands).toContain('resume');
  });

  it('refuses a halt of a key the token may not use, and a halt with no reason', async () => {
    await expect(
      w.engine.halt({ key: 'beta', reason: 'x', principal: { kind: 'token', name: 't', keys: ['alpha'] } }),
    ).rejects.toMatchObject({ code: 'key_not_authorized' });
    await expect(w.engine.halt({ key: 'beta', reason: '  ', principal: w.operator })).rejects.toMatchObject({
      code: 'request_invalid',
    });
  });
});

describe('key_show', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ keys: { alpha: {}, beta: {} } });
  });
  afterAll(() => w.close());

  it('reads balance, usage and halt fresh on every call: a sign and a halt show at once', async () => {
    const balanceReads = () => w.localnet.stats().calls.getBalance ?? 0;
    const before = balanceReads();
    // Nothing is kept between calls: each call made after the last one answered reads the balance again.
    for (let i = 0; i < 4; i++) await w.engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(balanceReads()).toBe(before + 4);
    // Calls made at the same moment share one read (the RPC client asks a question once per batch), as fresh for each.
    const views = await Promise.all(
      Array.from({ length: 4 }, () => w.engine.keyShow({ key: 'alpha', principal: w.operator })),
    );
    expect(balanceReads()).toBe(before + 5);
    const first = views[0]![0]!.balance_lamports!;
    expect((await w.engine.sign({ payload: w.transfer('alpha', 1_000_000), principal: w.operator })).outcome).toBe(
      'confirmed',
    );
    const [after] = await w.engine.keyShow({ key: 'alpha', principal: w.operator });
    expect(after!.balance_lamports).toBe(first - 1_000_000 - FEE);
    expect(after!.spent_or_reserved_24h).toBe(1_000_000 + FEE);
    await w.ledger.halt({
      key: 'alpha',
      reason: 'halted elsewhere',
      by: 'operator',
      ts: Math.floor(Date.now() / 1000),
    });
    expect((await w.engine.keyShow({ key: 'alpha', principal: w.operator }))[0]!.halted).toMatchObject({
      reason: 'halted elsewhere',
    });
    expect(await w.ledger.resume('alpha', 'operator', Math.floor(Date.now() / 1000))).toBe(true);
    expect((await w.engine.keyShow({ key: 'alpha', principal: w.operator }))[0]!.halted).toBeNull();
  });

  it('lists only the keys a token may use, and refuses another key before saying whether it exists', async () => {
    const token = { kind: 'token', name: 't', keys: ['beta'] } as const;
    expect((await w.engine.keyShow({ principal: token })).map((v) => v.name)).toEqual(['beta']);
    await expect(w.engine.keyShow({ key: 'alpha', principal: token })).rejects.toMatchObject({
      code: 'key_not_authorized',
    });
    await expect(w.engine.keyShow({ key: 'nope', principal: token })).rejects.toMatchObject({
      code: 'key_not_authorized',
    });
    await expect(w.engine.keyShow({ key: 'nope', principal: w.operator })).rejects.toMatchObject({
      code: 'key_unknown',
    });
  });
});
