/**
 * Rows to records and back, for both stores. The drivers differ only in how numbers arrive (better-sqlite3:
 * numbers; pg: bigint columns as strings), so every number goes through Number().
 */
import type {
  ApprovalRecord,
  ApprovalRequest,
  ApprovalStatus,
  ApprovalVote,
  AuditCommand,
  AuditEntry,
  HaltRecord,
  IntentWatch,
  LamportCredit,
  TokenFigure,
} from '../types';

export type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
function str(v: unknown): string {
  if (typeof v === 'string') return v;
  return typeof v === 'number' || typeof v === 'bigint' ? v.toString() : '';
}
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));

/** `programs` is stored as JSON text; a value that does not parse cannot verify anyway (its hash differs). */
function programsOf(v: unknown): string[] {
  try {
    const p: unknown = JSON.parse(str(v));
    return Array.isArray(p) ? p.map((x) => str(x)) : [];
  } catch {
    return [];
  }
}

/** `tokens` is stored as JSON text or NULL; like `programs`, a value that does not parse fails verification. */
function tokensOf(v: unknown): TokenFigure[] | null {
  if (v === null || v === undefined) return null;
  try {
    const t: unknown = JSON.parse(str(v));
    return Array.isArray(t) ? (t as TokenFigure[]) : null;
  } catch {
    return null;
  }
}

/** `lamport_credits` is JSON text or NULL; a value that does not parse fails verification through the hash. */
function creditsOf(v: unknown): AuditEntry['lamport_credits'] {
  if (v === null || v === undefined) return null;
  try {
    const c: unknown = JSON.parse(str(v));
    return Array.isArray(c) ? (c as NonNullable<AuditEntry['lamport_credits']>) : null;
  } catch {
    return null;
  }
}

/** `usd_prices` is JSON text or NULL; a value that does not parse fails verification through the hash. */
function pricesOf(v: unknown): AuditEntry['usd_prices'] {
  if (v === null || v === undefined) return null;
  try {
    const p: unknown = JSON.parse(str(v));
    return Array.isArray(p) ? (p as NonNullable<AuditEntry['usd_prices']>) : null;
  } catch {
    return null;
  }
}

/** `approvers` is JSON text or NULL (anyone may vote). */
function approversOf(v: unknown): string[] | null {
  if (v === null || v === undefined) return null;
  try {
    const a: unknown = JSON.parse(str(v));
    return Array.isArray(a) ? a.map((x) => str(x)) : [];
  } catch {
    return []; // unreadable: nobody's vote counts, rather than anybody's
  }
}

/** `votes` is JSON text, written only by the stores from ApprovalVote values. */
function votesOf(v: unknown): ApprovalVote[] {
  try {
    const a: unknown = JSON.parse(str(v));
    return Array.isArray(a) ? (a as ApprovalVote[]) : [];
  } catch {
    return [];
  }
}

export function rowToEntry(r: Row): AuditEntry {
  const tokens = tokensOf(r.tokens);
  const credits = creditsOf(r.lamport_credits);
  const prices = pricesOf(r.usd_prices);
  const watch = watchOf(r);
  const budgets = budgetBlocksOf(r.budget_blocks);
  return {
    ts: num(r.ts),
    key: str(r.key),
    // Read back as stored: a value outside AuditCommand fails verification through the hash, not here.
    command: str(r.command) as AuditCommand,
    payload_hash: str(r.payload_hash),
    programs: programsOf(r.programs),
    summary: str(r.summary),
    intent: strOrNull(r.intent),
    outcome: str(r.outcome),
    detail: strOrNull(r.detail),
    signature: strOrNull(r.signature),
    slot: numOrNull(r.slot),
    balance_change: numOrNull(r.balance_change),
    ...(tokens ? { tokens } : {}),
    ...(credits ? { lamport_credits: credits } : {}),
    ...(r.usd_micros === null || r.usd_micros === undefined ? {} : { usd_micros: str(r.usd_micros) }),
    ...(prices ? { usd_prices: prices } : {}),
    ...(budgets ? { budget_blocks: budgets } : {}),
    prev: str(r.prev),
    hash: str(r.hash),
    ...(watch ? { watch } : {}),
  };
}

/** `budget_blocks` is JSON text (a list of revocation ids) or NULL; what is not a list of strings reads as none. */
function budgetBlocksOf(v: unknown): string[] | null {
  if (v === null || v === undefined) return null;
  try {
    const a: unknown = JSON.parse(str(v));
    // Read back as stored: a value altered in the table fails verification through the hash.
    return Array.isArray(a) ? a.map((x) => str(x)) : null;
  } catch {
    return null;
  }
}

/** An intent's watch columns, or null for an entry that has none (send_mode NULL). */
function watchOf(r: Row): IntentWatch | null {
  const mode = strOrNull(r.send_mode);
  if (mode !== 'send' && mode !== 'sign_only') return null;
  return {
    mode,
    last_valid_block_height: num(r.last_valid_block_height),
    fee_payer: strOrNull(r.fee_payer),
    from_slot: numOrNull(r.from_slot),
  };
}

/** An entry's column values in ENTRY_COLUMNS order, seq first. */
export function entryRowValues(seq: number, entry: AuditEntry): unknown[] {
  return [
    seq,
    entry.ts,
    entry.key,
    entry.command,
    entry.payload_hash,
    JSON.stringify(entry.programs),
    entry.summary,
    entry.intent,
    entry.outcome,
    entry.detail,
    entry.signature,
    entry.slot,
    entry.balance_change,
    entry.prev,
    entry.hash,
    entry.tokens ? JSON.stringify(entry.tokens) : null,
    entry.watch?.mode ?? null,
    entry.watch?.last_valid_block_height ?? null,
    entry.watch?.fee_payer ?? null,
    entry.watch?.from_slot ?? null,
    entry.lamport_credits ? JSON.stringify(entry.lamport_credits) : null,
    entry.usd_micros ?? null,
    entry.usd_prices ? JSON.stringify(entry.usd_prices) : null,
    entry.budget_blocks ? JSON.stringify(entry.budget_blocks) : null,
  ];
}

export function rowToHalt(r: Row): HaltRecord {
  return { key: str(r.key), reason: str(r.reason), by: str(r.by), ts: num(r.ts) };
}

export function haltRowValues(rec: HaltRecord): unknown[] {
  return [rec.key, rec.reason, rec.by, rec.ts];
}

export function rowToApproval(r: Row): ApprovalRecord {
  const tokens = tokensOf(r.tokens);
  return {
    id: str(r.id),
    key: str(r.key),
    summary: str(r.summary),
    payload_hash: str(r.payload_hash),
    balance_change: numOrNull(r.balance_change),
    fee: numOrNull(r.fee),
    compute_units: numOrNull(r.compute_units),
    ...(tokens ? { tokens } : {}),
    requested_by: str(r.requested_by),
    ts: num(r.ts),
    expires_at: num(r.expires_at),
    status: str(r.status) as ApprovalStatus, // written only by this module's callers, from ApprovalStatus
    decided_by: strOrNull(r.decided_by),
    decided_at: numOrNull(r.decided_at),
    message: strOrNull(r.message),
    message_description: strOrNull(r.message_description),
    required: num(r.required),
    approvers: approversOf(r.approvers),
    waiter: strOrNull(r.waiter),
    votes: votesOf(r.votes),
    programs: jsonListOrNull(r.programs) as string[] | null,
    destinations: jsonListOrNull(r.destinations) as LamportCredit[] | null,
    fee_payer: strOrNull(r.fee_payer),
    usd_value: strOrNull(r.usd_value),
  };
}

/** A JSON column an approval shows (written by approvalRowValues), or null. */
function jsonListOrNull(v: unknown): unknown[] | null {
  if (v === null || v === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(str(v));
    return Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** A new request's values for insertApproval: id first, then the request in APPROVAL_COLUMNS order. */
export function approvalRowValues(id: string, req: ApprovalRequest): unknown[] {
  return [
    id,
    req.key,
    req.summary,
    req.payload_hash,
    req.balance_change,
    req.fee,
    req.compute_units,
    req.requested_by,
    req.ts,
    req.expires_at,
    req.tokens ? JSON.stringify(req.tokens) : null,
    req.message ?? null,
    req.message_description ?? null,
    req.required ?? 1,
    req.approvers ? JSON.stringify(req.approvers) : null,
    req.waiter ?? null,
    req.programs ? JSON.stringify(req.programs) : null,
    req.destinations ? JSON.stringify(req.destinations) : null,
    req.fee_payer ?? null,
    req.usd_value ?? null,
  ];
}

/** A decision's values for decideApproval: status, decided_by, decided_at, votes, then the id. */
export function decisionRowValues(rec: ApprovalRecord): unknown[] {
  return [rec.status, rec.decided_by, rec.decided_at, JSON.stringify(rec.votes), rec.id];
}

/** The head record as stored. */
export function rowToHead(r: Row): { seq: number; hash: string } {
  return { seq: num(r.seq), hash: str(r.hash) };
}
