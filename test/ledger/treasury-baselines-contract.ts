/**
 * The treasury baselines (src/ledger/treasury-baselines.ts), run by the ledger contract on each store: a row read back
 * as written (an amount beyond 2^53 exact), visible to another handle (a restart, a replica), moved only from the row
 * a pass read, so of two passes racing from one row exactly one moves it.
 */
import type { Ledger, TreasuryBaseline } from '../../src/ledger/types';
import { randomAddress } from '../support/payloads';

export function treasuryBaselinesContract(handles: { ledger: () => Ledger; reopen: () => Promise<Ledger> }): void {
  describe('treasury baselines', () => {
    const account = randomAddress();
    const first: TreasuryBaseline = {
      key: 'agent',
      account,
      mint: randomAddress(),
      delegate: randomAddress(),
      amount: 2n ** 63n - 1n,
      ts: 1_700_000_000,
      seq: 41,
    };

    it('stores a row, reads it back exactly from another handle, and keeps keys apart', async () => {
      const ledger = handles.ledger();
      expect(await ledger.treasuryBaselines('agent')).toEqual([]);
      expect(await ledger.moveTreasuryBaseline(null, first)).toBe(true);
      const other = { ...first, key: 'other', amount: 7n };
      expect(await ledger.moveTreasuryBaseline(null, other)).toBe(true);
      const again = await handles.reopen();
      expect(await again.treasuryBaselines('agent')).toEqual([first]);
      expect(await again.treasuryBaselines('other')).toEqual([other]);
    });

    it('moves a row only from the row as it was read: a stale pass, or a second insert, writes nothing', async () => {
      const ledger = handles.ledger();
      expect(await ledger.moveTreasuryBaseline(null, first)).toBe(true);
      expect(await ledger.moveTreasuryBaseline(null, { ...first, amount: 1n })).toBe(false);
      const second = { ...first, amount: 5n, ts: first.ts + 600, seq: 50 };
      expect(await ledger.moveTreasuryBaseline(first, second)).toBe(true);
      // A pass that read `first` before `second` was written finds it moved.
      expect(await ledger.moveTreasuryBaseline(first, { ...first, amount: 4n, seq: 49 })).toBe(false);
      expect(await ledger.dropTreasuryBaseline(first)).toBe(false);
      expect(await ledger.treasuryBaselines('agent')).toEqual([second]);
      expect(await ledger.dropTreasuryBaseline(second)).toBe(true);
      expect(await ledger.treasuryBaselines('agent')).toEqual([]);
    });

    it('of two handles moving the same row at once, exactly one moves it', async () => {
      const a = handles.ledger();
      const b = await handles.reopen();
      expect(await a.moveTreasuryBaseline(null, first)).toBe(true);
      const fromA = { ...first, amount: 3n, seq: 60 };
      const fromB = { ...first, amount: 2n, seq: 61 };
      const moved = await Promise.all([a.moveTreasuryBaseline(first, fromA), b.moveTreasuryBaseline(first, fromB)]);
      expect(moved.filter(Boolean)).toHaveLength(1);
      expect(await a.treasuryBaselines('agent')).toEqual([moved[0] ? fromA : fromB]);
    });
  });
}
