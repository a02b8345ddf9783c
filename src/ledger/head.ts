/**
 * The head record as an operator handles it: compared with a chain, and written as `SEQ:HASH` (printed by
 * `audit export`, taken by `audit verify --head`) so a copy kept elsewhere can prove a file or store was not cut.
 */
import type { AuditEntry, ChainHead } from './types';

/** Why a chain of `count` entries ending in `lastHash` is not the one `head` describes, or null when it is. */
export function headMismatch(count: number, lastHash: string, head: ChainHead): string | null {
  if (count < head.seq)
    return `broken: the chain ends after ${count} entries, but its head record says ${head.seq} ending in ${head.hash}: entries are missing from the end`;
  if (count > head.seq)
    return `broken: the chain has ${count} entries, but its head record says ${head.seq}: the head record does not match the chain`;
  if (lastHash !== head.hash)
    return `broken: the last entry's hash is ${lastHash}, but the head record says ${head.hash}`;
  return null;
}

/** `SEQ:HASH` as `audit export` prints it and `audit verify --head` takes it; null when malformed. */
export function parseHead(text: string): ChainHead | null {
  const [, seqText, hash] = /^(\d{1,15}):([0-9a-f]{64})$/.exec(text.trim()) ?? [];
  if (seqText === undefined || hash === undefined) return null;
  const seq = Number(seqText);
  if (seq === 0 && !/^0{64}$/.test(hash)) return null; // an empty chain's head is the genesis hash
  return { seq, hash };
}

export function formatHead(head: ChainHead): string {
  return `${head.seq}:${head.hash}`;
}

/**
 * The first `head.seq` entries: what an export taken at `head` holds, whatever was appended while it was written,
 * so the file and the printed head describe the same chain.
 */
export async function* entriesUpToHead(entries: AsyncIterable<AuditEntry>, head: ChainHead): AsyncIterable<AuditEntry> {
  if (head.seq <= 0) return;
  let n = 0;
  for await (const e of entries) {
    yield e;
    if (++n >= head.seq) return;
  }
}
