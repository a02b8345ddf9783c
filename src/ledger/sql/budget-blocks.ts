/**
 * The index of intents by the credential blocks they count against: one row (revocation id, ts, seq) per block an
 * intent names in `budget_blocks`, so a block's usage book loads its intents by a key range instead of matching the
 * column's text in every entry of the ledger. It is derived from the chain, not part of it: nothing in it is hashed,
 * and it is written in the append's own transaction (audit-log.ts appendIn), so it never lags the entries. `ts`
 * is the intent's own, kept here so a load reads only the intents that can still count, however long the block has
 * been signing.
 */
import type { AuditEntry } from '../types';
import { run, type Work } from './driver';

/** The table, for a store whose integer column type is `int`; `tail` ends the statement (SQLite: WITHOUT ROWID). */
function table(int: string, tail: string): string {
  return `CREATE TABLE entry_budget_blocks (
     revocation_id TEXT NOT NULL,
     ts ${int} NOT NULL,
     seq ${int} NOT NULL,
     PRIMARY KEY (revocation_id, ts, seq)
   )${tail}`;
}

/**
 * SQLite: the table (its rows are the whole index, so no rowid besides), filled from the intents already written.
 * A value that is not a JSON list adds nothing rather than stopping the migration: the reader takes it for no list
 * either (rows.ts), and `audit verify` judges the entry; only text elements can name a block.
 */
export const SQLITE_BUDGET_BLOCK_INDEX = `${table('INTEGER', ' WITHOUT ROWID')};
  INSERT INTO entry_budget_blocks (revocation_id, ts, seq)
    SELECT DISTINCT b.value, e.ts, e.seq
      FROM entries e, json_each(
        CASE WHEN json_valid(e.budget_blocks) THEN
          CASE json_type(e.budget_blocks) WHEN 'array' THEN e.budget_blocks END
        END) b
     WHERE e.command = 'sign-intent' AND e.budget_blocks IS NOT NULL AND b.type = 'text'`;

/**
 * PostgreSQL: the same. Its cast of text to jsonb raises on what is not JSON, and no check before it exists on every
 * supported server, so a function for this migration's session catches that and yields nothing.
 */
export const POSTGRES_BUDGET_BLOCK_INDEX = `${table('bigint', '')};
  CREATE FUNCTION pg_temp.budget_block_ids(t text) RETURNS SETOF text LANGUAGE plpgsql AS $$
  DECLARE
    list jsonb;
  BEGIN
    BEGIN
      list := t::jsonb;
    EXCEPTION WHEN invalid_text_representation OR untranslatable_character THEN
      RETURN;
    END;
    IF jsonb_typeof(list) = 'array' THEN
      RETURN QUERY SELECT a.x #>> '{}' FROM jsonb_array_elements(list) AS a(x) WHERE jsonb_typeof(a.x) = 'string';
    END IF;
  END
  $$;
  INSERT INTO entry_budget_blocks (revocation_id, ts, seq)
    SELECT DISTINCT b.id, e.ts, e.seq
      FROM entries e CROSS JOIN LATERAL pg_temp.budget_block_ids(e.budget_blocks) AS b(id)
     WHERE e.command = 'sign-intent' AND e.budget_blocks IS NOT NULL;
  DROP FUNCTION pg_temp.budget_block_ids(text)`;

/**
 * Inside the append's transaction: the index rows of the entry at `seq`, in one statement (one round trip while the
 * head record is held). Only an intent counts against a block; a block named twice is one row.
 */
export function* indexBudgetBlocks(seq: number, entry: AuditEntry): Work<void> {
  if (entry.command !== 'sign-intent' || !entry.budget_blocks) return;
  const ids = [...new Set(entry.budget_blocks)];
  if (ids.length === 0) return;
  const rows = ids.map((_, i) => `($${i + 3}, $1, $2)`).join(', ');
  yield* run(`INSERT INTO entry_budget_blocks (revocation_id, ts, seq) VALUES ${rows}`, [entry.ts, seq, ...ids]);
}
