/**
 * The migration that gives intents their watch columns (IntentWatch in ../types.ts) and fills them in for the
 * intents a ledger already holds. Those recorded what the watcher needs only in their detail text, in the two
 * forms below; this is the one place that text is read, once, when a ledger is brought up to this schema.
 * The detail text stays as it was: it is part of each entry's hash, and a reader still reads it.
 */
import type { IntentWatch } from '../types';
import { all, run, type Work } from './driver';

/** The migration for a store whose integer column type is `int`: the columns, then the intents converted. */
export function intentWatchMigration(int: string): () => Work<void> {
  return function* () {
    // Nullable: every entry but an intent has none.
    yield* run('ALTER TABLE entries ADD COLUMN send_mode TEXT');
    yield* run(`ALTER TABLE entries ADD COLUMN last_valid_block_height ${int}`);
    yield* run('ALTER TABLE entries ADD COLUMN fee_payer TEXT');
    yield* run(`ALTER TABLE entries ADD COLUMN from_slot ${int}`);
    yield* convertIntentDetails();
  };
}

/** A sign-only intent's detail, with the fee payer (and, from later signers, the slot) when another account sends. */
const SIGN_ONLY_DETAIL =
  /^sign_only: watched until block height (\d+)(?:; fee payer ([1-9A-HJ-NP-Za-km-z]{32,44}) signs and sends it(?: after slot (\d+))?)?$/;
/** A sent transaction's intent (signers before this one wrote none for sent transactions: nothing to convert). */
const SENT_DETAIL = /^send: valid until block height (\d+)$/;

/** What an intent's detail written before the watch columns says, or null when it says nothing to watch by. */
export function watchFromLegacyDetail(detail: string): IntentWatch | null {
  const signOnly = SIGN_ONLY_DETAIL.exec(detail);
  if (signOnly?.[1])
    return {
      mode: 'sign_only',
      last_valid_block_height: Number(signOnly[1]),
      fee_payer: signOnly[2] ?? null,
      from_slot: signOnly[3] === undefined ? null : Number(signOnly[3]),
    };
  const sent = SENT_DETAIL.exec(detail);
  if (sent?.[1]) return { mode: 'send', last_valid_block_height: Number(sent[1]), fee_payer: null, from_slot: null };
  return null;
}

const PAGE = 1000;

/** Fills the watch columns of every intent written before them, a page of intents at a time. */
function* convertIntentDetails(): Work<void> {
  for (let after = 0; ;) {
    const rows = yield* all(
      `SELECT seq, detail FROM entries
        WHERE command = 'sign-intent' AND detail IS NOT NULL AND seq > $1 ORDER BY seq LIMIT $2`,
      [after, PAGE],
    );
    for (const r of rows) {
      const w = watchFromLegacyDetail(String(r.detail));
      if (w)
        yield* run(
          'UPDATE entries SET send_mode = $1, last_valid_block_height = $2, fee_payer = $3, from_slot = $4 WHERE seq = $5',
          [w.mode, w.last_valid_block_height, w.fee_payer, w.from_slot, r.seq],
        );
    }
    const last = rows[rows.length - 1];
    if (rows.length < PAGE || !last) return;
    after = Number(last.seq);
  }
}
