/**
 * The webhook outbox part of the ledger contract (contract.ts runs it for every store): notifications are durable,
 * claimed by one deliverer at a time across handles (processes, replicas), and settled only by their claimer.
 */
import type { Ledger, NotificationInput } from '../../src/ledger/types';

const note = (i: number, over: Partial<NotificationInput> = {}): NotificationInput => ({
  id: `msg_${String(i).padStart(4, '0')}`,
  hook: 'hooks.example~0a1b2c3d',
  event: 'key.halted',
  key: 'alpha',
  body: JSON.stringify({ type: 'key.halted', n: i }),
  created_at: 1_000 + i,
  next_at: 1_000 + i,
  ...over,
});

export function outboxContract(handles: { ledger: () => Ledger; reopen: () => Promise<Ledger> }): void {
  describe('notification outbox', () => {
    it('keeps what was enqueued exactly, pending, newest first, and counts it; another handle sees it', async () => {
      const ledger = handles.ledger();
      await ledger.enqueueNotifications([note(1), note(2, { key: null, event: 'approval.requested' })]);
      const listed = await ledger.listNotifications({ limit: 10 });
      expect(listed.map((n) => n.id)).toEqual(['msg_0002', 'msg_0001']);
      expect(listed[1]).toEqual({
        ...note(1),
        status: 'pending',
        attempts: 0,
        claimed_by: null,
        claim_until: null,
        last_error: null,
        settled_at: null,
      });
      expect(listed[0]?.key).toBeNull();
      expect(await ledger.notificationCounts()).toEqual({ pending: 2, delivered: 0, failed: 0 });
      const other = await handles.reopen();
      expect((await other.listNotifications({ limit: 1 })).map((n) => n.id)).toEqual(['msg_0002']);
      expect(await other.listNotifications({ limit: 10, status: 'failed' })).toEqual([]);
    });

    it('claims only rows that are due, and a claimed row from no other handle until its lease runs out', async () => {
      const ledger = handles.ledger();
      const other = await handles.reopen();
      await ledger.enqueueNotifications([note(1), note(2, { next_at: 5_000 })]);
      const first = await ledger.claimNotifications('a', 2_000, 1_000, 10);
      expect(first.map((n) => [n.id, n.claimed_by, n.claim_until])).toEqual([['msg_0001', 'a', 3_000]]);
      expect(await other.claimNotifications('b', 2_500, 1_000, 10)).toEqual([]);
      // The lease ran out (its holder died mid-attempt): another deliverer takes it over, and the row due later too.
      const taken = await other.claimNotifications('b', 5_000, 1_000, 10);
      expect(taken.map((n) => [n.id, n.claimed_by]).sort()).toEqual([
        ['msg_0001', 'b'],
        ['msg_0002', 'b'],
      ]);
      // The first holder's late result is not recorded over the new holder's claim.
      const late = { status: 'delivered' as const, attempts: 1, next_at: 2_000, last_error: null, settled_at: 5_001 };
      expect(await ledger.settleNotification('msg_0001', 'a', late)).toBe(false);
      expect(await other.settleNotification('msg_0001', 'b', late)).toBe(true);
      const [row] = (await ledger.listNotifications({ limit: 10, status: 'delivered' })).filter(
        (n) => n.id === 'msg_0001',
      );
      expect(row).toMatchObject({ status: 'delivered', attempts: 1, claimed_by: null, claim_until: null });
    });

    it('a retry waits for its next_at, a failed row is never claimed again, and both stay visible', async () => {
      const ledger = handles.ledger();
      await ledger.enqueueNotifications([note(1), note(2)]);
      await ledger.claimNotifications('a', 2_000, 1_000, 10);
      const retry = {
        status: 'pending' as const,
        attempts: 1,
        next_at: 9_000,
        last_error: 'HTTP 503',
        settled_at: null,
      };
      const failed = {
        status: 'failed' as const,
        attempts: 5,
        next_at: 2_000,
        last_error: 'timed out',
        settled_at: 2_100,
      };
      expect(await ledger.settleNotification('msg_0001', 'a', retry)).toBe(true);
      expect(await ledger.settleNotification('msg_0002', 'a', failed)).toBe(true);
      expect(await ledger.claimNotifications('a', 8_999, 1_000, 10)).toEqual([]);
      expect((await ledger.claimNotifications('a', 9_000, 1_000, 10)).map((n) => [n.id, n.attempts])).toEqual([
        ['msg_0001', 1],
      ]);
      expect(await ledger.listNotifications({ limit: 10, status: 'failed' })).toEqual([
        expect.objectContaining({ id: 'msg_0002', attempts: 5, last_error: 'timed out', settled_at: 2_100 }),
      ]);
      expect(await ledger.notificationCounts()).toEqual({ pending: 1, delivered: 0, failed: 1 });
    });

    it('two handles claiming at once never take the same row, and together take every row', async () => {
      const ledger = handles.ledger();
      const other = await handles.reopen();
      await ledger.enqueueNotifications(Array.from({ length: 40 }, (_, i) => note(i)));
      const drain = async (l: Ledger, owner: string): Promise<string[]> => {
        const got: string[] = [];
        for (;;) {
          const batch = await l.claimNotifications(owner, 10_000, 60_000, 3);
          if (batch.length === 0) return got;
          got.push(...batch.map((n) => n.id));
        }
      };
      const [a, b] = await Promise.all([drain(ledger, 'a'), drain(other, 'b')]);
      const all = [...a, ...b];
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual(Array.from({ length: 40 }, (_, i) => note(i).id).sort());
    });

    it('prunes delivered rows settled before a time, never pending or failed ones', async () => {
      const ledger = handles.ledger();
      await ledger.enqueueNotifications([note(1), note(2), note(3), note(4)]);
      await ledger.claimNotifications('a', 2_000, 1_000, 10);
      const done = (at: number) => ({
        status: 'delivered' as const,
        attempts: 1,
        next_at: 0,
        last_error: null,
        settled_at: at,
      });
      await ledger.settleNotification('msg_0001', 'a', done(3_000));
      await ledger.settleNotification('msg_0002', 'a', done(8_000));
      await ledger.settleNotification('msg_0003', 'a', { ...done(3_000), status: 'failed', last_error: 'HTTP 410' });
      expect(await ledger.pruneNotifications(5_000)).toBe(1);
      expect((await ledger.listNotifications({ limit: 10 })).map((n) => n.id).sort()).toEqual([
        'msg_0002',
        'msg_0003',
        'msg_0004',
      ]);
    });
  });
}
