/**
 * A key's usage (limits.ts's computeUsage) as one SQL statement, so a sign does not read the key's whole day of
 * entries into JS: the database scans its indexes instead. `greatest` is the dialect's two-argument max
 * (SQLite: max, PostgreSQL: GREATEST); `p(n)` its n-th placeholder. The contract suite pins it to computeUsage.
 * The look-ups from a final to its intent (and back) go by signature: SQLite's planner would otherwise scan the
 * key's day of entries for each one (quadratic), so it is told which index to use; PostgreSQL plans them well.
 *
 * Parameters, in order: key, rate window start, spend window start, daily cap.
 */
export function usageSql(dialect: 'sqlite' | 'postgres', p: (n: number) => string): string {
  const greatest = dialect === 'sqlite' ? 'max' : 'GREATEST';
  const bySignature = dialect === 'sqlite' ? 'INDEXED BY entries_signature' : '';
  const key = p(1);
  const rateSince = p(2);
  const since = p(3);
  const cap = p(4);
  const spend = (col: string) => `${greatest}(-(${col}), 0)`;
  return `SELECT
  (SELECT count(*) FROM entries WHERE key = ${key} AND command = 'sign-intent' AND ts >= ${rateSince}) AS rate,
  (SELECT coalesce(sum(CASE
       WHEN f.outcome IN ('confirmed', 'failed') AND f.balance_change IS NOT NULL THEN ${spend('f.balance_change')}
       ELSE coalesce(
         (SELECT CASE WHEN i.balance_change IS NULL THEN ${cap} ELSE ${spend('i.balance_change')} END
            FROM entries i ${bySignature}
           WHERE i.key = ${key} AND i.command = 'sign-intent' AND i.ts >= ${since} AND i.signature = f.signature
           ORDER BY i.seq DESC LIMIT 1),
         ${cap})
     END), 0)
     FROM entries f
    WHERE f.key = ${key} AND f.command = 'sign' AND f.ts >= ${since}
      AND f.outcome IN ('confirmed', 'failed', 'unknown', 'expired')) AS finals,
  (SELECT coalesce(sum(CASE WHEN e.balance_change IS NULL THEN ${cap} ELSE ${spend('e.balance_change')} END), 0)
     FROM entries e
    WHERE e.key = ${key} AND e.command = 'sign-intent' AND e.ts >= ${since}
      AND (e.signature IS NULL OR NOT EXISTS (
            SELECT 1 FROM entries g ${bySignature}
             WHERE g.key = ${key} AND g.command = 'sign' AND g.ts >= ${since} AND g.signature = e.signature))) AS orphans`;
}

/** Indexes the statement relies on (added by a migration in each store). */
export const USAGE_INDEXES = [
  'CREATE INDEX entries_key_command_ts ON entries (key, command, ts)',
  'CREATE INDEX entries_signature ON entries (signature, command)',
];
