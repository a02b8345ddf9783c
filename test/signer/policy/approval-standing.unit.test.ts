/** What an approval request's state means for the sign that waits on it. */
import type { ApprovalRecord } from '../../../src/ledger/types';
import { approvalStanding, standingAtDeadline } from '../../../src/signer/policy/rules/approval-standing';

const ME = 'waiter-1';

function request(over: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'ab12',
    key: 'k',
    payload_hash: 'h',
    summary: 's',
    balance_change: -5000,
    created_at: 0,
    expires_at: 60,
    status: 'pending',
    decided_by: null,
    decided_at: null,
    required: 2,
    approvers: null,
    waiter: ME,
    votes: [],
    ...over,
  } as ApprovalRecord;
}

const vote = (operator: string) => ({ operator, decision: 'approved' as const, ts: 1, credential: null });

test('pending waits; approved sends; rejected, abandoned and expired refuse with the request id', () => {
  expect(approvalStanding(request(), ME, 30_000)).toEqual({ outcome: 'waiting' });
  expect(approvalStanding(request({ status: 'approved' }), ME, 30_000)).toEqual({ outcome: 'approved' });
  expect(approvalStanding(request({ status: 'approved', waiter: null }), ME, 30_000)).toEqual({ outcome: 'approved' });
  for (const [status, reason] of [
    ['rejected', 'approval_rejected'],
    ['abandoned', 'approval_abandoned'],
    ['expired', 'approval_timeout'],
  ] as const) {
    expect(approvalStanding(request({ status }), ME, 30_000)).toMatchObject({
      outcome: 'refused',
      refusal: { reason, figures: { approval_id: 'ab12' } },
    });
  }
});

test('a request another sign now waits on supersedes this one, even approved; a rejection still says rejected', () => {
  const theirs = { waiter: 'waiter-2' };
  expect(approvalStanding(request({ ...theirs, status: 'approved' }), ME, 30_000)).toMatchObject({
    refusal: { reason: 'approval_superseded' },
  });
  expect(approvalStanding(request({ ...theirs, status: 'rejected' }), ME, 30_000)).toMatchObject({
    refusal: { reason: 'approval_rejected' },
  });
});

test('at the deadline only an approval still its own sends; the timeout counts the approvals, never names them', () => {
  expect(standingAtDeadline(request({ status: 'approved' }), ME, 30_000)).toEqual({ outcome: 'approved' });
  expect(standingAtDeadline(request({ status: 'approved', waiter: 'waiter-2' }), ME, 30_000)).toMatchObject({
    refusal: { reason: 'approval_timeout' },
  });
  const none = standingAtDeadline(request(), ME, 30_000);
  expect(none).toMatchObject({ refusal: { message: 'not approved: no operator approved request ab12 within 30 s' } });
  const one = standingAtDeadline(request({ votes: [vote('alice')] }), ME, 1_500);
  expect(one).toMatchObject({
    refusal: { message: 'not approved: request ab12 got 1 of 2 approvals within 1.5 s, not enough' },
  });
});
