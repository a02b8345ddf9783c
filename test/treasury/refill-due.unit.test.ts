/**
 * The `treasury.refill_due` event: its once-id names the key, the account and the UTC day (so the outbox keeps one
 * per day), and a Slack hook gets one escaped line saying what to run.
 */
import { renderBody } from '../../src/notify/format';
import { refillPeriod, treasuryRefillDue } from '../../src/treasury/refill-due';
import type { TreasuryAccountStatus } from '../../src/treasury/status';

const status = (account: string): TreasuryAccountStatus & { chain: NonNullable<TreasuryAccountStatus['chain']> } => ({
  account,
  chain: {
    account,
    mint: 'MINT',
    owner: 'OWNER',
    decimals: 6,
    program: 'spl-token',
    mintRefusal: null,
    delegate: 'KEY',
    delegatedAmount: 1_000_000n,
  },
  plan: {
    account,
    mint: 'MINT',
    owner: 'OWNER',
    delegate: 'KEY',
    amount: 5_000_000n,
    decimals: 6,
    program: 'spl-token',
    basis: 'tokens.per_day',
    why: "the mint's per_day",
  },
  refillBelow: 2_500_000n,
  refillDue: true,
});

const NOON = Date.UTC(2026, 11, 6, 12) / 1000;

describe('treasury.refill_due', () => {
  it('is once per key, account and UTC day', () => {
    const at = (ts: number, account = 'A') => treasuryRefillDue('agent', status(account), ts)?.once;
    expect(refillPeriod(NOON)).toBe('2026-12-06');
    expect(at(NOON)).toBe('treasury.refill_due:agent:A:2026-12-06');
    expect(at(NOON + 11 * 3600)).toBe(at(NOON));
    expect(at(NOON + 12 * 3600)).toBe('treasury.refill_due:agent:A:2026-12-07');
    expect(at(NOON, 'B')).not.toBe(at(NOON));
  });

  it('is nothing without a plan', () => {
    expect(treasuryRefillDue('agent', { ...status('A'), plan: null, refillBelow: null }, NOON)).toBeNull();
  });

  it('tells a Slack hook the figures and the command, escaped', () => {
    const event = treasuryRefillDue('<!channel>', status('A'), NOON)!;
    const { text } = JSON.parse(renderBody('slack', event)) as { text: string };
    expect(text).toContain('*Treasury refill due* for key `&lt;!channel&gt;`');
    expect(text).toContain('A has 1000000 of MINT left, below 2500000');
    expect(text).toContain('plans 5000000');
    expect(text).not.toContain('<!channel>');
  });
});
