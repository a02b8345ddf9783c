/**
 * Credential revocations over either store: the row and its 'revoke' audit entry written in one transaction, so the
 * table every replica's verifier reads and the chain always agree. The statements are the table's alone, so they
 * live here rather than in the shared statement list.
 */
import { appendIn, headIn, storeName } from './audit-log';
import { boundSummary, validateEntryInput } from './hash-chain';
import { all, get, run, type SqlDriver, type Work } from './sql/driver';
import type { Row } from './sql/rows';
import { statements } from './sql/statements';
import type { AuditEntryInput, CredentialRevocation, CredentialRevocations } from './types';

const COLUMNS = 'revocation_id, name, reason, by, ts';
const SQL = {
  get: `SELECT ${COLUMNS} FROM credential_revocations WHERE revocation_id = $1`,
  list: `SELECT ${COLUMNS} FROM credential_revocations ORDER BY ts, revocation_id`,
  insert: `INSERT INTO credential_revocations (${COLUMNS}) VALUES ($1, $2, $3, $4, $5)`,
};

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function rowToRevocation(r: Row): CredentialRevocation {
  return {
    revocation_id: text(r.revocation_id),
    name: r.name === null || r.name === undefined ? null : text(r.name),
    reason: text(r.reason),
    by: text(r.by),
    ts: Number(r.ts),
  };
}

/** The 'revoke' audit entry: the reason as summary; what was revoked and by whom as detail. */
export function revokeEntry(rec: CredentialRevocation): AuditEntryInput {
  const named = rec.name === null ? '' : ` (issued root ${rec.name})`;
  return {
    ts: rec.ts,
    key: '*',
    command: 'revoke',
    payload_hash: '',
    programs: [],
    summary: rec.reason,
    intent: null,
    outcome: 'revoked',
    detail: `credential block ${rec.revocation_id}${named} by ${rec.by}`,
    signature: null,
    slot: null,
    balance_change: null,
  };
}

export function credentialRevocations(db: SqlDriver): CredentialRevocations {
  const chain = statements(db.dialect);
  const store = storeName(db);
  return {
    async listCredentialRevocations() {
      return (await db.read('cannot read credential revocations', () => all(SQL.list))).map(rowToRevocation);
    },
    async revokeCredential(rec) {
      const bounded = { ...rec, reason: boundSummary(rec.reason) };
      validateEntryInput(revokeEntry(bounded));
      return await db.write('cannot record the revocation', function* (): Work<CredentialRevocation> {
        // The head record first: it serialises two revocations of one block, so the second sees the first's row.
        yield* headIn(chain.head, store);
        const existing = yield* get(SQL.get, [rec.revocation_id]);
        if (existing) return rowToRevocation(existing);
        yield* run(SQL.insert, [bounded.revocation_id, bounded.name, bounded.reason, bounded.by, bounded.ts]);
        yield* appendIn(chain, store, revokeEntry(bounded));
        return bounded;
      });
    },
  };
}
