/**
 * judgeAllowance, the rule of one reconciliation pass: the allowance may fall only by what the signer spent.
 */
import { judgeAllowance } from '../../src/treasury/reconcile';
import { randomAddress } from '../support/payloads';

const KEY = randomAddress();
const ACCOUNT = randomAddress();
const MINT = randomAddress();
const last = { delegatedAmount: 5_000n };
const chain = (delegatedAmount: bigint, delegate: string | null = KEY) => ({
  account: ACCOUNT,
  mint: MINT,
  delegate,
  delegatedAmount,
});

describe('judgeAllowance', () => {
  it('takes the first pass as the baseline', () => {
    expect(judgeAllowance(undefined, chain(5_000n), KEY, 0n)).toEqual({
      kind: 'first_seen',
      account: ACCOUNT,
      delegatedAmount: 5_000n,
    });
  });
  it('accepts a fall the signer’s own spends explain, and a refill', () => {
    expect(judgeAllowance(last, chain(3_000n), KEY, 2_000n)).toMatchObject({ kind: 'ok' });
    expect(judgeAllowance(last, chain(9_000n), KEY, 2_000n)).toMatchObject({ kind: 'ok' });
  });
  it('calls a fall below the expectation a mismatch, with both figures', () => {
    expect(judgeAllowance(last, chain(2_999n), KEY, 2_000n)).toEqual({
      kind: 'mismatch',
      account: ACCOUNT,
      mint: MINT,
      expected: 3_000n,
      actual: 2_999n,
    });
  });
  it('reports a revoked or handed-over delegate before comparing amounts', () => {
    expect(judgeAllowance(last, chain(0n, null), KEY, 0n)).toEqual({
      kind: 'delegate_changed',
      account: ACCOUNT,
      delegate: null,
    });
    const other = randomAddress();
    expect(judgeAllowance(last, chain(5_000n, other), KEY, 0n)).toMatchObject({ delegate: other });
  });
});
