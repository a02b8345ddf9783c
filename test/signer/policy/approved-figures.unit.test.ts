/** What an approval binds: the transaction sent after it may move no more than the figures the operators approved. */
import type { ApprovalRecord } from '../../../src/ledger/types';
import { approvedFiguresRefusal, type FiguresToSend } from '../../../src/signer/policy/rules/approved-figures';
import { randomAddress } from '../../support/payloads';

const dest = randomAddress();
const mint = randomAddress();
const program = randomAddress();
const feePayer = randomAddress();

const approved: Pick<ApprovalRecord, 'id' | 'balance_change' | 'tokens' | 'destinations' | 'programs' | 'fee_payer'> = {
  id: 'k2m9q4x7',
  balance_change: -6_005_000,
  tokens: [{ mint, decimals: 6, change: '-500', credits: [{ owner: dest, amount: '500' }] }],
  destinations: [{ address: dest, lamports: 6_000_000 }],
  programs: [program],
  fee_payer: feePayer,
};

const same: FiguresToSend = {
  balanceChange: -6_005_000,
  tokens: [{ mint, change: '-500', credits: [{ owner: dest, amount: '500' }] }],
  gains: [{ address: dest, lamports: 6_000_000 }],
  programs: [program],
  feePayer,
};

const reasonOf = (now: Partial<FiguresToSend>) => approvedFiguresRefusal(approved, { ...same, ...now });

test('the approved figures exactly, or less, pass', () => {
  expect(reasonOf({})).toBeNull();
  expect(reasonOf({ balanceChange: -6_004_999, gains: [{ address: dest, lamports: 5_999_999 }] })).toBeNull();
  expect(reasonOf({ tokens: [{ mint, change: '-499', credits: [{ owner: dest, amount: '499' }] }] })).toBeNull();
});

test('one lamport more than approved is refused, with both figures', () => {
  expect(reasonOf({ balanceChange: -6_005_001 })).toMatchObject({
    check: 'approval',
    reason: 'approval_figures_changed',
    figures: { approval_id: 'k2m9q4x7', requested: 6_005_001, approved: 6_005_000 },
  });
});

test('a spend the simulation does not bound is refused', () => {
  expect(reasonOf({ balanceChange: null })).toMatchObject({ reason: 'approval_figures_changed' });
});

test('one base unit more of an approved mint, or any of another mint, is refused', () => {
  expect(reasonOf({ tokens: [{ mint, change: '-501', credits: [] }] })).toMatchObject({
    figures: { mint, requested: '501', approved: '500' },
  });
  const other = randomAddress();
  expect(reasonOf({ tokens: [...same.tokens, { mint: other, change: '-1', credits: [] }] })).toMatchObject({
    figures: { mint: other, requested: '1', approved: '0' },
  });
});

test('a credit to someone new, or more to an approved destination, is refused', () => {
  const stranger = randomAddress();
  expect(reasonOf({ gains: [...same.gains, { address: stranger, lamports: 2_039_280 }] })).toMatchObject({
    figures: { destination: stranger, requested: 2_039_280, approved: 0 },
  });
  expect(reasonOf({ gains: [{ address: dest, lamports: 6_000_001 }] })).toMatchObject({
    figures: { destination: dest, requested: 6_000_001, approved: 6_000_000 },
  });
  expect(reasonOf({ tokens: [{ mint, change: '-500', credits: [{ owner: stranger, amount: '500' }] }] })).toMatchObject(
    { figures: { mint, destination: stranger, requested: '500', approved: '0' } },
  );
});

test('another program or another fee payer is refused', () => {
  const other = randomAddress();
  expect(reasonOf({ programs: [program, other] })).toMatchObject({ figures: { program: other } });
  expect(reasonOf({ feePayer: other })).toMatchObject({ figures: { fee_payer: other } });
});
