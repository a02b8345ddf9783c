/**
 * Approval requests over either store. Every decision reads the request (row-locked where the store locks rows),
 * judges it (records.ts) with the revocations as they stand in the same transaction, and writes it back, so votes
 * cast at once on several replicas queue on the row and none slips past a revocation.
 */
import { storeName } from './audit-log';
import { boundSummary } from './hash-chain';
import { newApprovalId, normaliseApprovalId } from './ids';
import { applyDecision, electorate, recountDecision, type Electorate } from './records';
import { advisoryLockId } from './sql/dialect';
import { all, get, run, type SqlDriver, type Work } from './sql/driver';
import { OPERATOR_SQL as OP } from './sql/operator-statements';
import { rowToStanding } from './sql/operator-rows';
import { approvalRowValues, decisionRowValues, rowToApproval } from './sql/rows';
import { statements } from './sql/statements';
import { SignerError } from '../util/errors';
import type { ApprovalRecord, ApprovalRequest, Approvals } from './types';

type Judge = (rec: ApprovalRecord, e: Electorate) => { record: ApprovalRecord; changed: boolean };

export function approvals(db: SqlDriver): Approvals {
  const SQL = statements(db.dialect);
  const store = storeName(db);

  /** Inside a write transaction: a new request under a fresh id. */
  function* insertIn(req: ApprovalRequest): Work<ApprovalRecord> {
    // 40 random bits: a collision is rare; draw again a few times.
    for (let attempt = 0; attempt < 6; attempt++) {
      const row = yield* get(SQL.insertApproval, approvalRowValues(newApprovalId(), req));
      if (row) return rowToApproval(row);
    }
    throw new SignerError('ledger', `${store} ledger: could not draw a free approval id`);
  }

  /** Reads the request for a decision, judges it with whose votes count now, writes it back if it changed. */
  function decide(id: string, voters: readonly string[] | null, judge: Judge): Promise<ApprovalRecord> {
    const wanted = normaliseApprovalId(id);
    return db.write('cannot record the decision', function* () {
      const row = yield* get(SQL.getApprovalForDecision, [wanted]);
      if (!row) throw new SignerError('request_invalid', `no approval request with id ${id}`);
      // Read after the row lock: a revocation committed before this vote's turn is seen by it.
      const standings = (yield* all(OP.listStandings)).map(rowToStanding);
      const { record, changed } = judge(rowToApproval(row), electorate(voters, standings));
      if (changed) yield* run(SQL.decideApproval, decisionRowValues(record));
      return record;
    });
  }

  return {
    async createApproval(req) {
      const bounded = { ...req, summary: boundSummary(req.summary) };
      return await db.write('cannot record the approval request', () => insertIn(bounded));
    },
    /**
     * Two signs of one payload must not both find none and insert: SQLite's write transaction holds the file;
     * PostgreSQL takes a transaction-scoped lock on the key and payload hash (a row lock cannot cover a row not
     * yet inserted), so the second waits for the first to commit and then finds its request.
     */
    async requestApproval(req) {
      const bounded = { ...req, summary: boundSummary(req.summary) };
      const serialise = db.dialect.transactionLock;
      return await db.write('cannot record the approval request', function* () {
        if (serialise) yield* run(serialise, [advisoryLockId(`approval:${req.key}:${req.payload_hash}`)]);
        const row = yield* get(SQL.openForPayload, [req.key, req.payload_hash, req.ts]);
        if (!row) return { record: yield* insertIn(bounded), joined: false };
        const found = rowToApproval(row);
        yield* run(SQL.reopenFor, [req.waiter, found.id]);
        return {
          record: { ...found, waiter: req.waiter, status: 'pending' as const, decided_by: null, decided_at: null },
          joined: true,
        };
      });
    },
    async getApproval(id) {
      const row = await db.read('cannot read approvals', () => get(SQL.getApproval, [normaliseApprovalId(id)]));
      return row ? rowToApproval(row) : null;
    },
    async listApprovals(filter) {
      const status = filter?.status;
      const rows = await db.read('cannot read approvals', () =>
        status ? all(SQL.listApprovalsByStatus, [status]) : all(SQL.listApprovals),
      );
      return rows.map(rowToApproval);
    },
    decideApproval(id, decision, by, ts, credential = null, voters = null) {
      return decide(id, voters, (rec, e) => applyDecision(rec, decision, by, ts, credential, e));
    },
    recountApproval(id, voters, ts) {
      return decide(id, voters, (rec, e) => recountDecision(rec, e, ts));
    },
    leaveApproval(id, waiter, ts) {
      return decide(id, null, (rec, e) =>
        rec.waiter === null || rec.waiter === waiter
          ? applyDecision(rec, 'abandoned', 'signer', ts, null, e)
          : { record: rec, changed: false },
      );
    },
  };
}
