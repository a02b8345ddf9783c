/**
 * The token spend policy on the real engine: LiteSVM's own SPL Token and Token-2022 programs behind the embedded
 * chain's JSON-RPC endpoint, a USDC-like mint with 6 decimals. Transfers under the caps land; per_tx, per_day and
 * per-destination caps, unlisted mints and owners, delegate approvals and a Token-2022 transfer hook are refused;
 * the ledger holds each sign's token figures and still verifies.
 */
import { renderApproval } from '../../src/cli/render';
import type { KeyConfig, TokenPolicy } from '../../src/config/types';
import type { Report } from '../../src/signer/report';
import { payload, randomAddress } from '../support/payloads';
import { approve, setMint, setTokenAccount, tokenBalance, transferChecked } from '../support/tokens';
import { makeWorld, type World } from '../support/world';

const USDC = randomAddress();
const OTHER_MINT = randomAddress();
const HOOKED = randomAddress();
const SCALED = randomAddress();
const INTEREST = randomAddress();
const merchant = randomAddress();
const stranger = randomAddress();
const M = 1_000_000n; // one USDC in base units

const usdc = (over: Partial<TokenPolicy>): TokenPolicy => ({
  mint: USDC,
  program: 'spl-token',
  per_tx: null,
  per_day: 1_000n * M,
  destinations: null,
  per_destination_per_day: null,
  approve_above: null,
  ...over,
});

const keys: Record<string, Partial<KeyConfig>> = {
  payer: { tokens: [usdc({ per_tx: 5n * M, per_day: 8n * M, destinations: [merchant] })] },
  // The lamport threshold covers the fee, so the token threshold decides.
  gated: { approval: 'confirm', approve_above_lamports: 100_000, tokens: [usdc({ approve_above: 1n * M })] },
  perdest: { tokens: [usdc({ per_destination_per_day: 3n * M })] },
  agree: { tokens: [usdc({ per_tx: 4n * M, per_day: 10n * M })] },
  hooked: {
    tokens: [{ ...usdc({}), mint: HOOKED, program: 'token-2022' }],
  },
  scaled: {
    tokens: [
      { ...usdc({ per_tx: 5n * M }), mint: SCALED, program: 'token-2022' },
      { ...usdc({}), mint: INTEREST, program: 'token-2022' },
    ],
  },
};

let w: World;
/** Each key's token account of each mint it holds, and the merchant's and the stranger's. */
const accounts: Record<string, Record<string, string>> = {};
let merchantUsdc: string;
let strangerUsdc: string;

beforeAll(async () => {
  w = await makeWorld({ keys });
  setMint(w.localnet, USDC, { decimals: 6 });
  setMint(w.localnet, OTHER_MINT, { decimals: 6 });
  // A Token-2022 transfer hook with no program set: transfers still run, but the signer cannot vouch for the mint.
  setMint(w.localnet, HOOKED, { program: 'token-2022', decimals: 6, extensions: [[14, new Uint8Array(64)]] });
  // Scaled UI amount (25: authority, multiplier, timestamp, new multiplier) and interest-bearing (10) mints.
  setMint(w.localnet, SCALED, { program: 'token-2022', decimals: 6, extensions: [[25, new Uint8Array(56)]] });
  setMint(w.localnet, INTEREST, { program: 'token-2022', decimals: 6, extensions: [[10, new Uint8Array(52)]] });
  for (const [name, k] of Object.entries(w.keys)) {
    accounts[name] = {
      [USDC]: setTokenAccount(w.localnet, { mint: USDC, owner: k.pubkey, amount: 100n * M }),
      [OTHER_MINT]: setTokenAccount(w.localnet, { mint: OTHER_MINT, owner: k.pubkey, amount: 100n * M }),
      [HOOKED]: setTokenAccount(w.localnet, { mint: HOOKED, owner: k.pubkey, amount: 100n * M, program: 'token-2022' }),
      [SCALED]: setTokenAccount(w.localnet, { mint: SCALED, owner: k.pubkey, amount: 100n * M, program: 'token-2022' }),
      [INTEREST]: setTokenAccount(w.localnet, {
        mint: INTEREST,
        owner: k.pubkey,
        amount: 100n * M,
        program: 'token-2022',
      }),
    };
  }
  merchantUsdc = setTokenAccount(w.localnet, { mint: USDC, owner: merchant, amount: 0n });
  strangerUsdc = setTokenAccount(w.localnet, { mint: USDC, owner: stranger, amount: 0n });
});
afterAll(() => w.close());

/** A payload in which key `name` pays `amount` of `mint` to the token account `to`. */
function pay(name: string, to: string, amount: bigint, mint = USDC): Record<string, unknown> {
  const k = w.keys[name]!;
  const source = accounts[name]![mint]!;
  const program = mint === HOOKED || mint === SCALED || mint === INTEREST ? 'token-2022' : 'spl-token';
  return payload(k.pubkey, [transferChecked({ program, source, mint, destination: to, owner: k.pubkey }, amount, 6)], {
    summary: `pay ${amount} of ${mint}`,
  });
}

const sign = (p: Record<string, unknown>) => w.engine.sign({ payload: p, principal: w.operator });
const check = (p: Record<string, unknown>) => w.engine.check({ payload: p, principal: w.operator });

describe('a USDC-like mint under per_tx, per_day and destinations', () => {
  it('signs a transfer under the caps: the merchant gets it on chain, the report and the intent carry the figures', async () => {
    const before = await tokenBalance(w.localnet.url, merchantUsdc);
    const r = await sign(pay('payer', merchantUsdc, 3n * M));
    expect(r.outcome).toBe('confirmed');
    expect(r.token_changes).toEqual([
      {
        mint: USDC,
        decimals: 6,
        change: '-3000000',
        ui_change: '-3',
        credits: [{ owner: merchant, amount: '3000000' }],
      },
    ]);
    expect(r.remaining_daily_tokens).toEqual([{ mint: USDC, remaining: '5000000' }]);
    expect(await tokenBalance(w.localnet.url, merchantUsdc)).toBe(before + 3n * M);
    const intent = (await w.ledger.tail(5)).find((e) => e.command === 'sign-intent' && e.signature === r.signature);
    expect(intent?.tokens).toEqual([
      { mint: USDC, decimals: 6, change: '-3000000', credits: [{ owner: merchant, amount: '3000000' }] },
    ]);
  });

  it('refuses a transfer over per_tx in check and in sign, naming the cap in base and UI units; nothing moves', async () => {
    const before = await tokenBalance(w.localnet.url, merchantUsdc);
    for (const r of [await check(pay('payer', merchantUsdc, 6n * M)), await sign(pay('payer', merchantUsdc, 6n * M))]) {
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'limits',
        reason: 'token_per_tx_cap',
        figures: { mint: USDC, requested: '6000000', cap: '5000000' },
      });
      expect(r.detail).toBe(
        `limits: per-transaction cap of mint ${USDC}: this transaction spends 6000000 (6 UI), more than per_tx 5000000 (5 UI)`,
      );
    }
    expect(await tokenBalance(w.localnet.url, merchantUsdc)).toBe(before);
  });

  it('stops at per_day: 3 + 4 pass, then 2 more is refused (check says so first)', async () => {
    expect((await sign(pay('payer', merchantUsdc, 4n * M))).outcome).toBe('confirmed');
    const checked = await check(pay('payer', merchantUsdc, 2n * M));
    const signed = await sign(pay('payer', merchantUsdc, 2n * M));
    for (const r of [checked, signed]) {
      expect(r).toMatchObject({
        outcome: 'refused',
        failed_check: 'limits',
        reason: 'token_per_day_cap',
        figures: { mint: USDC, spent: '7000000', requested: '2000000', cap: '8000000' },
      });
      expect(r.detail).toContain('7000000 (7 UI) spent or reserved in 24 h, plus 2000000 (2 UI)');
    }
  });

  it('key_show tells the agent the policy and what is left of each mint today', async () => {
    const [view] = await w.engine.keyShow({ key: 'payer', principal: w.operator });
    expect(view!.policy.tokens).toEqual([
      {
        mint: USDC,
        program: 'spl-token',
        per_tx: '5000000',
        per_day: '8000000',
        spent_or_reserved_24h: '7000000',
        remaining_daily: '1000000',
        destinations: [merchant],
        per_destination_per_day: null,
        approve_above: null,
      },
    ]);
    expect(view!.policy.sign_only).toBe(true);
    expect(JSON.stringify(view)).not.toContain(w.config.key_dir);
  });

  it('refuses a transfer to an owner not among the mint destinations', async () => {
    const r = await sign(pay('payer', strangerUsdc, 1n * M));
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'destinations',
      reason: 'token_destination_not_allowed',
      figures: { mint: USDC, destination: stranger, requested: '1000000' },
    });
    expect(r.detail).toBe(
      `destinations: the transaction moves 1000000 (1 UI) of mint ${USDC} to ${stranger}, which is not one of the mint's destinations`,
    );
  });

  it('refuses spending a mint the key has no policy for', async () => {
    const otherMerchant = setTokenAccount(w.localnet, { mint: OTHER_MINT, owner: merchant, amount: 0n });
    const r = await sign(pay('payer', otherMerchant, 1n, OTHER_MINT));
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'tokens',
      reason: 'mint_not_listed',
      figures: { mint: OTHER_MINT, requested: '1' },
    });
    expect(r.detail).toBe(
      `tokens: the transaction moves 1 (0.000001 UI) of mint ${OTHER_MINT} out of the key's accounts, and the mint is not in the key's tokens`,
    );
  });
});

describe('token authority', () => {
  it('refuses Approve (a delegate could spend later, outside any cap) before simulating', async () => {
    const k = w.keys.payer!;
    const r = await check(payload(k.pubkey, [approve(accounts.payer![USDC]!, randomAddress(), k.pubkey, 1n)]));
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'tokens',
      reason: 'token_op_not_allowed',
      figures: { token_op: 'approve' },
    });
    expect(r.detail).toContain('token instruction 4 (Approve), which this key may not do');
    expect(r.checks).not.toContain('simulation');
  });
});

describe('Token-2022 extensions', () => {
  it('refuses a mint with a transfer hook, naming it, though the key lists the mint', async () => {
    const merchantHooked = setTokenAccount(w.localnet, {
      mint: HOOKED,
      owner: merchant,
      amount: 0n,
      program: 'token-2022',
    });
    const r = await sign(pay('hooked', merchantHooked, 1n * M, HOOKED));
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'tokens',
      reason: 'mint_extension_not_accounted',
      figures: { mint: HOOKED },
    });
    // The detail names the extension.
    expect(r.detail).toBe(
      `tokens: mint ${HOOKED}: the mint has a transfer hook (a program of the mint’s choosing runs on every transfer)`,
    );
  });
});

describe('approval by amount and per-destination caps', () => {
  it('a confirm key signs under approve_above without an operator and asks above it', async () => {
    const small = await check(pay('gated', merchantUsdc, M / 2n));
    const large = await check(pay('gated', merchantUsdc, 2n * M));
    expect(small).toMatchObject({ outcome: 'ok', would_need_approval: false });
    expect(large).toMatchObject({ outcome: 'ok', would_need_approval: true });
    const signed = await sign(pay('gated', merchantUsdc, M / 2n));
    expect(signed.outcome).toBe('confirmed');
    const approvals = await w.ledger.listApprovals();
    expect(approvals.filter((a) => a.key === 'gated')).toEqual([]);
  });

  it('shows the operator the token amounts in base and UI units and who receives them', async () => {
    let shown = '';
    const r = await w.engine.sign({
      payload: pay('gated', merchantUsdc, 2n * M),
      principal: w.operator,
      onProgress: (e) => {
        if (e.stage !== 'approval') return;
        void (async () => {
          const record = await w.ledger.getApproval(e.approval_id);
          shown = record ? renderApproval(record) : '';
          await w.ledger.decideApproval(e.approval_id, 'approved', 'operator', Math.floor(Date.now() / 1000));
        })();
      },
    });
    expect(r.outcome).toBe('confirmed');
    expect(shown).toContain(`token ${USDC}: -2000000 (-2 UI)  (computed by the signer's simulation)`);
    expect(shown).toContain(`to ${merchant}: 2000000 (2 UI)`);
  });

  it('caps what one owner receives in 24 h without capping the others', async () => {
    const otherUsdc = setTokenAccount(w.localnet, { mint: USDC, owner: stranger, amount: 0n });
    expect((await sign(pay('perdest', merchantUsdc, 2n * M))).outcome).toBe('confirmed');
    const again = await sign(pay('perdest', merchantUsdc, 2n * M));
    expect(again).toMatchObject({
      outcome: 'refused',
      failed_check: 'limits',
      reason: 'token_per_destination_cap',
      figures: { mint: USDC, destination: merchant, received: '2000000', requested: '2000000' },
    });
    expect((await sign(pay('perdest', otherUsdc, 2n * M))).outcome).toBe('confirmed');
  });
});

describe('check tells what sign does', () => {
  it('agrees with sign on every amount of a table around the caps', async () => {
    const cases: [bigint, Report['outcome'], Report['reason']][] = [
      [1n * M, 'confirmed', null],
      [4n * M, 'confirmed', null],
      [4n * M + 1n, 'refused', 'token_per_tx_cap'],
      [4n * M, 'confirmed', null], // 9 of 10 spent
      [2n * M, 'refused', 'token_per_day_cap'],
      [1n * M, 'confirmed', null], // exactly 10
      [1n, 'refused', 'token_per_day_cap'],
    ];
    for (const [amount, expected, reason] of cases) {
      const checked = await check(pay('agree', merchantUsdc, amount));
      const signed = await sign(pay('agree', merchantUsdc, amount));
      expect({ amount, outcome: signed.outcome }).toEqual({ amount, outcome: expected });
      expect(checked.outcome).toBe(expected === 'confirmed' ? 'ok' : 'refused');
      expect(checked.failed_check).toBe(signed.failed_check);
      expect({ amount, checked: checked.reason, signed: signed.reason }).toEqual({
        amount,
        checked: reason,
        signed: reason,
      });
    }
  });
});

describe('the ledger', () => {
  it('writes no token field for a sign that moves no tokens, so such entries read as they always did', async () => {
    const r = await sign(w.transfer('payer', 1_000_000));
    expect(r.outcome).toBe('confirmed');
    const entries = (await w.ledger.tail(5)).filter((e) => e.signature === r.signature);
    expect(entries.map((e) => e.command).sort()).toEqual(['sign', 'sign-intent']);
    for (const e of entries) expect(e).not.toHaveProperty('tokens');
  });

  it('still verifies with token figures in its entries', async () => {
    expect(await w.ledger.verify()).toMatchObject({ ok: true });
  });
});

describe('mints whose UI amount is not base units shifted by the decimals', () => {
  it.each([
    ['scaled UI amount', SCALED],
    ['interest-bearing', INTEREST],
  ])('%s: amounts are shown in base units only, with a warning, never as a wrong UI figure', async (name, mint) => {
    const to = setTokenAccount(w.localnet, { mint, owner: merchant, amount: 0n, program: 'token-2022' });
    const r = await check(pay('scaled', to, 2n * M, mint));
    expect(r.outcome).toBe('ok');
    expect(r.token_changes).toEqual([
      { mint, decimals: null, change: '-2000000', ui_change: null, credits: [{ owner: merchant, amount: '2000000' }] },
    ]);
    expect(r.warnings.join(' ')).toContain(`mint ${mint} is ${name}: its UI amount is not base units`);
  });

  it('a refusal names the amount in base units only', async () => {
    const to = setTokenAccount(w.localnet, { mint: SCALED, owner: merchant, amount: 0n, program: 'token-2022' });
    const r = await check(pay('scaled', to, 6n * M, SCALED));
    expect(r).toMatchObject({
      outcome: 'refused',
      failed_check: 'limits',
      reason: 'token_per_tx_cap',
      figures: { mint: SCALED, requested: '6000000', cap: '5000000' },
    });
    // The wording is the point: no UI figure for a mint whose UI amount the decimals do not give.
    expect(r.detail).toContain('this transaction spends 6000000, more than per_tx 5000000');
    expect(r.detail).not.toContain('UI');
  });
});
