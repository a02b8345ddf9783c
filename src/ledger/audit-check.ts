/**
 * `audit verify` on a store: the hash chain, then what the chain alone cannot show.
 * - The head record (the last entry's sequence and hash, moved in the same transaction as every append): a chain
 *   cut short at its end, or missing its last entry, still links up, but no longer ends where the head says.
 * - The halts table against the chain's halt and resume entries: a halt row deleted behind the ledger's back
 *   would quietly let a halted key sign again; one added by hand has no entry to answer for it.
 */
import { ChainChecker } from './hash-chain';
import { headMismatch } from './head';
import type { AuditEntry, ChainHead, HaltRecord, VerifyResult } from './types';

export async function verifyAgainstHead(
  entries: AsyncIterable<AuditEntry>,
  head: ChainHead,
  halts: readonly HaltRecord[],
): Promise<VerifyResult> {
  const check = new ChainChecker();
  /** Keys the chain leaves halted, with the line of the halt entry. */
  const halted = new Map<string, number>();
  let line = 0;
  for await (const entry of entries) {
    line += 1;
    const broken = check.next(entry, line);
    if (broken) return broken;
    if (entry.command === 'halt') halted.set(entry.key, line);
    else if (entry.command === 'resume') halted.delete(entry.key);
  }
  const headProblem = headMismatch(line, check.lastHash, head);
  if (headProblem) return check.fail(line + 1, headProblem);

  const recorded = new Set(halts.map((h) => h.key));
  for (const [key, at] of halted)
    if (!recorded.has(key))
      return check.fail(
        at,
        `broken: line ${at} halts key ${key} and no later entry resumes it, but no halt is recorded`,
      );
  for (const key of recorded)
    if (!halted.has(key))
      return check.fail(line, `broken: key ${key} is recorded as halted, but no halt entry in the chain halts it`);
  return check.result();
}
