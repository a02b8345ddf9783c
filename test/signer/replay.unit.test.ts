/**
 * replaySigns judges recorded signs with the engine's own rules, so each row carries the reason a sign would get:
 * a mint the new policy does not list, per_tx, per_day counted over the replayed signs (a refused one adds nothing),
 * destinations and per_destination_per_day, the rate, the lamport caps and the program allow-list; the dollar caps
 * at the dollar value each sign's intent recorded, never re-priced.
 */
import { localCluster } from '../../src/config/clusters';
import type { KeyConfig, TokenPolicy } from '../../src/config/types';
import type { AuditEntry } from '../../src/ledger/types';
import { parseSince, replaySigns } from '../../src/signer/replay';
import { randomAddress } from '../support/payloads';

const MINT = randomAddress();
const MERCHANT = randomAddress();
const OTHER = randomAddress();
const cluster = localCluster({ rpc_url: 'http://127.0.0.1:1', game_programs: [], player_profile: null });

function key(tokens: Partial<TokenPolicy>[]): KeyConfig {
  return {
    name: 'agent',
    class: 'session',
    pubkey: randomAddress(),
    profile: null,
    approval: 'auto',
    transfer_to: [],
    extra_programs: [],
    rate_limit_per_minute: 100,
    daily_lamport_cap: 1_000_000,
    allow_unattended: false,
    tokens: tokens.map((t) => ({
      mint: MINT,
      program: 'spl-token',
      per_tx: null,
      per_day: 1_000_000n,
      destinations: null,
      per_destination_per_day: null,
      approve_above: null,
      ...t,
    })),
  };
}

function payment(ts: number, amount: number, to = MERCHANT): AuditEntry {
  return {
    ts,
    key: 'agent',
    command: 'sign',
    payload_hash: 'h',
    programs: ['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
    summary: 'pay',
    intent: null,
    outcome: 'confirmed',
    detail: null,
    signature: `sig${String(ts)}`,
    slot: 1,
    balance_change: 0,
    tokens: [{ mint: MINT, decimals: 6, change: String(-amount), credits: [{ owner: to, amount: String(amount) }] }],
    prev: '',
    hash: '',
  };
}

const reasons = (rows: ReturnType<typeof replaySigns>) => rows.map((r) => r.refusal?.reason ?? 'allowed');

test('a mint the new policy does not list refuses every payment in it', () => {
  const rows = replaySigns([payment(100, 10)], [key([])], cluster, 0);
  expect(rows[0]!.refusal).toMatchObject({ check: 'tokens', reason: 'mint_not_listed', figures: { mint: MINT } });
  expect(rows[0]!.refusal?.message).toMatch(/the mint is not in the key's tokens/);
});

test('per_tx and per_day, counted over what the new policy would have allowed', () => {
  const entries = [payment(100, 40), payment(200, 70), payment(300, 40), payment(400, 30)];
  // per_tx 60 refuses the 70; per_day 100 then sees 40 + 40 = 80, and refuses the 30 (110).
  const rows = replaySigns(entries, [key([{ per_tx: 60n, per_day: 100n }])], cluster, 0);
  expect(reasons(rows)).toEqual(['allowed', 'token_per_tx_cap', 'allowed', 'token_per_day_cap']);
  // The recorded decimals (6) show the amounts as the engine shows them.
  expect(rows[3]!.refusal?.message).toBe(
    `daily cap of mint ${MINT}: 80 (0.00008 UI) spent or reserved in 24 h, plus 30 (0.00003 UI) for this transaction, exceeds per_day 100 (0.0001 UI)`,
  );
  expect(rows[3]!.refusal?.figures).toEqual({ mint: MINT, spent: '80', requested: '30', cap: '100' });
});

test('destinations and per_destination_per_day', () => {
  const entries = [payment(100, 10, OTHER), payment(200, 50), payment(300, 60)];
  const rows = replaySigns(entries, [key([{ destinations: [MERCHANT], per_destination_per_day: 100n }])], cluster, 0);
  expect(reasons(rows)).toEqual(['token_destination_not_allowed', 'allowed', 'token_per_destination_cap']);
});

test('only signs at or after --since are listed; the day before still counts', () => {
  const rows = replaySigns([payment(100, 90), payment(200, 20)], [key([{ per_day: 100n }])], cluster, 150);
  expect(rows).toHaveLength(1);
  expect(reasons(rows)).toEqual(['token_per_day_cap']);
});

function lamportSign(ts: number, lamports: number, programs = ['11111111111111111111111111111111']): AuditEntry {
  return { ...payment(ts, 0), programs, balance_change: -lamports, tokens: null };
}

test('the rate and the lamport caps, counted over what the new policy would have allowed', () => {
  const agent: KeyConfig = { ...key([]), rate_limit_per_minute: 2, per_tx_lamports: 500, daily_lamport_cap: 1_000 };
  const entries = [
    lamportSign(1_000, 100),
    lamportSign(1_010, 600), // per_tx
    lamportSign(1_020, 100),
    lamportSign(1_030, 100), // the third allowed sign in a minute
    lamportSign(1_100, 400),
    lamportSign(1_110, 500), // 600 before it: 1,100 would pass the cap (reaching it exactly is allowed)
  ];
  const rows = replaySigns(entries, [agent], cluster, 0);
  expect(reasons(rows)).toEqual(['allowed', 'per_tx_cap', 'allowed', 'rate_limit', 'allowed', 'per_day_cap']);
  expect(rows[5]!.refusal?.figures).toEqual({ spent: 600, requested: 500, cap: 1_000 });
});

test('a program outside the new allow-list, and a key the new policy dropped', () => {
  const other = randomAddress();
  const rows = replaySigns(
    [lamportSign(100, 1, [other]), { ...lamportSign(200, 1), key: 'gone' }],
    [key([])],
    cluster,
    0,
  );
  expect(rows.map((r) => r.refusal)).toEqual([
    expect.objectContaining({ check: 'programs', reason: 'program_not_allowed', figures: { program: other } }),
    expect.objectContaining({ check: 'authorized', reason: 'key_not_authorized' }),
  ]);
});

/** A sign's intent, recording `usd` dollars (micro-dollars) as the engine records it at sign time; null: none. */
function intentOf(sign: AuditEntry, usd: bigint | null): AuditEntry {
  return {
    ...sign,
    ts: sign.ts - 1,
    command: 'sign-intent',
    outcome: 'pending',
    usd_micros: usd === null ? null : usd.toString(),
  };
}

test('dollar caps judge each sign at the value its intent recorded: two $4 signs under $5 a day refuse the second', () => {
  const four = 4_000_000n;
  const first = lamportSign(1_000, 100);
  const second = lamportSign(2_000, 100);
  const entries = [intentOf(first, four), first, intentOf(second, four), second];
  const priced: KeyConfig = { ...key([]), usd: { per_tx: null, per_day: 5_000_000n, approve_above: null } };
  const rows = replaySigns(entries, [priced], cluster, 0);
  expect(rows.map((r) => r.usd_value)).toEqual(['4.00', '4.00']);
  expect(reasons(rows)).toEqual(['allowed', 'usd_per_day_cap']);
  expect(rows[1]!.refusal).toMatchObject({
    check: 'limits',
    figures: { usd_spent: '4.00', usd_requested: '4.00', usd_cap: '5.00' },
  });
  expect(rows[1]!.refusal?.message).toMatch(/\(as recorded when it was signed\), exceeds \$5\.00$/);
  // The same day under a $8 cap passes both (equal to the cap is allowed); a $3 per_tx refuses both.
  const roomy: KeyConfig = { ...priced, usd: { per_tx: null, per_day: 8_000_000n, approve_above: null } };
  expect(reasons(replaySigns(entries, [roomy], cluster, 0))).toEqual(['allowed', 'allowed']);
  const perTx: KeyConfig = { ...priced, usd: { per_tx: 3_000_000n, per_day: null, approve_above: null } };
  expect(reasons(replaySigns(entries, [perTx], cluster, 0))).toEqual(['usd_per_tx_cap', 'usd_per_tx_cap']);
  // A refused sign adds nothing to the day: under $5, a third $1 sign after the refused one passes.
  const third = lamportSign(3_000, 100);
  const more = [...entries, intentOf(third, 1_000_000n), third];
  expect(reasons(replaySigns(more, [priced], cluster, 0))).toEqual(['allowed', 'usd_per_day_cap', 'allowed']);
});

test('a sign whose intent recorded no dollar value is not judged in dollars, and its row says none', () => {
  const sign = lamportSign(1_000, 100);
  const priced: KeyConfig = { ...key([]), usd: { per_tx: 1n, per_day: 1n, approve_above: null } };
  const rows = replaySigns([intentOf(sign, null), sign], [priced], cluster, 0);
  expect(rows).toMatchObject([{ usd_value: null, refusal: null }]);
});

test('--since reads 7d, 24h, 30m and dates', () => {
  expect(parseSince('7d', 1_000_000)).toBe(1_000_000 - 7 * 86_400);
  expect(parseSince('24h', 100_000)).toBe(100_000 - 86_400);
  expect(parseSince('30m', 10_000)).toBe(10_000 - 1_800);
  expect(parseSince('2026-12-01T00:00:00Z', 0)).toBe(Date.parse('2026-12-01T00:00:00Z') / 1000);
  expect(parseSince('soon', 0)).toBeNull();
});
