/**
 * The usage books of one ledger handle: a UsageBook per key it was asked about, kept current by reading the
 * entries written since its last read, whichever process or replica wrote them. The chain's sequence numbers are
 * given out in commit order under the head record's lock, so what a reader sees is always a prefix of the chain
 * and one cursor is enough: no entry is missed and none is read twice. A key's book is loaded once, from the
 * entries that can still count (USAGE_HORIZON_S), up to the cursor; afterwards it only takes in what is new.
 * Reads are serialised, so two usage reads at once never fold the same entries twice.
 */
import { USAGE_HORIZON_S, UsageBook } from './usage-book';
import type { AuditEntry, Usage } from './types';

/** What the books read from a store. */
export interface UsageSource {
  /** The sequence number of the chain's last entry now (0 when empty). */
  headSeq(): Promise<number>;
  /** Sign, sign-intent and sign-message entries of every key after `after`, in chain order, at most `limit`. */
  signEntriesAfter(after: number, limit: number): Promise<{ seq: number; entry: AuditEntry }[]>;
  /** One key's sign, sign-intent and sign-message entries with ts >= since and seq <= through, in chain order. */
  keySignEntries(key: string, since: number, through: number): Promise<AuditEntry[]>;
}

const PAGE = 1000;

export class UsageBooks {
  private cursor: number | null = null;
  private readonly books = new Map<string, { book: UsageBook; asOf: number }>();
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly source: UsageSource) {}

  usage(key: string, now: number, dailyCap: number): Promise<Usage> {
    return this.serially(async () => (await this.current(key, now)).usage(now, dailyCap));
  }

  inFlight(key: string, signature: string, now: number): Promise<boolean> {
    return this.serially(async () => (await this.current(key, now)).inFlight(signature));
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const next = this.turn.then(step, step);
    this.turn = next.catch(() => undefined);
    return next;
  }

  /** The key's book with every entry written so far folded in. */
  private async current(key: string, now: number): Promise<UsageBook> {
    if (this.cursor === null) this.cursor = await this.source.headSeq();
    for (;;) {
      const rows = await this.source.signEntriesAfter(this.cursor, PAGE);
      for (const { seq, entry } of rows) {
        this.books.get(entry.key)?.book.add(entry);
        this.cursor = seq;
      }
      if (rows.length < PAGE) break;
    }
    // A book only moves forward in time; asked about an earlier moment (the clock was set back), it is loaded anew.
    const held = this.books.get(key);
    if (held && held.asOf <= now) {
      held.asOf = now;
      return held.book;
    }
    const book = new UsageBook();
    for (const e of await this.source.keySignEntries(key, now - USAGE_HORIZON_S, this.cursor)) book.add(e);
    this.books.set(key, { book, asOf: now });
    return book;
  }
}
