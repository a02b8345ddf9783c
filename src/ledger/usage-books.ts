/**
 * The usage books of one ledger handle: a UsageBook per key it was asked about, kept current by reading the
 * entries written since its last read, whichever process or replica wrote them. The chain's sequence numbers are
 * given out in commit order under the head record's lock, so what a reader sees is always a prefix of the chain
 * and one cursor is enough: no entry is missed and none is read twice. A key's book is loaded once, from the
 * entries that can still count (USAGE_HORIZON_S), up to the cursor; afterwards it only takes in what is new.
 * Reads run side by side, and each entry is folded in once.
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

/** A key's book: being loaded (entries folded meanwhile wait in `buffer`), then kept current. */
interface HeldBook {
  book: UsageBook;
  /** The latest time it was asked about: a book only moves forward in time. */
  asOf: number;
  /** While the book loads: the key's entries after the load's cursor, in chain order, folded in once it has loaded. */
  buffer: AuditEntry[] | null;
  ready: Promise<void>;
}

export class UsageBooks {
  private cursor: number | null = null;
  private starting: Promise<void> | null = null;
  private readonly books = new Map<string, HeldBook>();

  constructor(private readonly source: UsageSource) {}

  async usage(key: string, now: number, dailyCap: number): Promise<Usage> {
    return (await this.current(key, now)).usage(now, dailyCap);
  }

  async inFlight(key: string, signature: string, now: number): Promise<boolean> {
    return (await this.current(key, now)).inFlight(signature);
  }

  /** The key's book with every entry written before this call folded in. */
  private async current(key: string, now: number): Promise<UsageBook> {
    this.starting ??= this.source.headSeq().then((seq) => {
      this.cursor ??= seq;
    });
    await this.starting;
    let held = this.books.get(key);
    // Asked about an earlier moment than before (the clock was set back): loaded anew.
    if (!held || held.asOf > now) held = this.load(key, now);
    await this.catchUp();
    await held.ready;
    held.asOf = Math.max(held.asOf, now);
    return held.book;
  }

  /**
   * Reads and folds in the entries after the cursor. Reads may run side by side (no read waits for another): each
   * returns every entry after the cursor it started from, so rows at or below the cursor when they are folded were
   * folded by another read, and are skipped.
   */
  private async catchUp(): Promise<void> {
    for (;;) {
      const from = this.cursor ?? 0;
      const rows = await this.source.signEntriesAfter(from, PAGE);
      for (const { seq, entry } of rows) {
        if (this.cursor !== null && seq <= this.cursor) continue;
        const held = this.books.get(entry.key);
        if (held?.buffer) held.buffer.push(entry);
        else held?.book.add(entry);
        this.cursor = seq;
      }
      if (rows.length < PAGE) return;
    }
  }

  /** Starts loading a key's book from the entries up to the cursor; those folded meanwhile wait in its buffer. */
  private load(key: string, now: number): HeldBook {
    const held: HeldBook = { book: new UsageBook(), asOf: now, buffer: [], ready: Promise.resolve() };
    this.books.set(key, held);
    const through = this.cursor ?? 0;
    held.ready = this.source.keySignEntries(key, now - USAGE_HORIZON_S, through).then(
      (entries) => {
        for (const e of entries) held.book.add(e);
        for (const e of held.buffer ?? []) held.book.add(e);
        held.buffer = null;
      },
      (e: unknown) => {
        if (this.books.get(key) === held) this.books.delete(key);
        throw e;
      },
    );
    return held;
  }
}
