/**
 * The usage books of one ledger handle: a UsageBook per key it was asked about, kept current by reading the
 * entries written since its last read, whichever process or replica wrote them. The chain's sequence numbers are
 * given out in commit order under the head record's lock, so what a reader sees is always a prefix of the chain
 * and one cursor is enough: no entry is missed and none is read twice. A key's book is loaded once, from the
 * entries that can still count (USAGE_HORIZON_S), up to the cursor; afterwards it only takes in what is new.
 * Reads run side by side, and each entry is folded in once.
 *
 * A store whose head record is cheap to read (a local file) asks for `headFirst`: a read then looks at the head
 * before the entries and skips them when nothing lies past the cursor, and the store hands its own commits in
 * (committed), so the entries a handle wrote itself are never read back. Where every read is a round trip to a
 * server, the head costs as much as the entries, and the books read the entries alone.
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
  /**
   * The intents naming a credential block in `budget_blocks` with ts >= since and seq <= through, and their finals,
   * in chain order (a final of another intent may come too: the block's book passes over it).
   */
  blockSignEntries(revocationId: string, since: number, through: number): Promise<AuditEntry[]>;
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

export interface UsageBooksOptions {
  /** Read the head before the entries, and take in the handle's own commits (see above). */
  headFirst: boolean;
}

export class UsageBooks {
  /**
   * Every sign entry up to here is folded in. With `headFirst` every entry up to here is accounted for (folded, or
   * not a sign entry), so the handle's next commit, when it is the entry right after, can be folded without a read.
   */
  private cursor: number | null = null;
  private starting: Promise<void> | null = null;
  private readonly books = new Map<string, HeldBook>();
  /**
   * A credential block's book (by revocation id): the intents that name it, whichever key wrote them, and the finals
   * of those intents, folded by the same rule as a key's (usage-book.ts), so a budget is reserved and released as a
   * key's cap is.
   */
  private readonly blocks = new Map<string, HeldBook>();
  /** Counts resets: a read that began before one folds nothing. */
  private epoch = 0;

  constructor(
    private readonly source: UsageSource,
    private readonly opts: UsageBooksOptions = { headFirst: false },
  ) {}

  async usage(key: string, now: number): Promise<Usage> {
    return (await this.current(key, now)).usage(now);
  }

  async blockUsage(revocationId: string, now: number): Promise<Usage> {
    return (await this.current(revocationId, now, 'block')).usage(now);
  }

  async inFlight(key: string, signature: string, now: number): Promise<boolean> {
    return (await this.current(key, now)).inFlight(signature);
  }

  /**
   * The key's book at once, when nothing is left to read for it: it has loaded, and every entry up to `head` (the
   * chain's head as the caller's write transaction sees it) is accounted for. Null when a read is needed (use
   * usage and inFlight), and always without `headFirst`, whose cursor says nothing of the entries between.
   */
  currentAt(key: string, head: number, now: number): UsageBook | null {
    const held = this.books.get(key);
    if (!this.opts.headFirst || this.cursor !== head || !held || held.buffer !== null || held.asOf > now) return null;
    held.asOf = now;
    return held.book;
  }

  /** The key's book with every entry written before this call folded in. */
  private async current(name: string, now: number, kind: 'key' | 'block' = 'key'): Promise<UsageBook> {
    const epoch = this.epoch;
    this.starting ??= this.source.headSeq().then((seq) => {
      if (epoch === this.epoch) this.cursor ??= seq;
    });
    await this.starting;
    let held = (kind === 'key' ? this.books : this.blocks).get(name);
    // Asked about an earlier moment than before (the clock was set back): loaded anew.
    if (!held || held.asOf > now) held = this.load(name, now, kind);
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
    const epoch = this.epoch;
    for (;;) {
      // Read before the entries, so the entries read next hold every sign entry up to it.
      const head = this.opts.headFirst ? await this.source.headSeq() : null;
      if (head !== null && this.cursor !== null && head <= this.cursor) return;
      const from = this.cursor ?? 0;
      const rows = await this.source.signEntriesAfter(from, PAGE);
      if (epoch !== this.epoch) return;
      for (const { seq, entry } of rows) this.fold(seq, entry);
      if (rows.length < PAGE) {
        if (head !== null && this.cursor !== null && head > this.cursor) this.cursor = head;
        return;
      }
    }
  }

  /**
   * Forgets every book and the cursor: the next read loads anew from the store. For a failover that lost the last
   * commits (asynchronous replication): the new primary's chain is shorter than what was read, and gives the lost
   * entries' sequence numbers to new ones, which a cursor past them would never read (a key's usage would then
   * lack signs made after the failover). The lost entries leave the books with it.
   */
  reset(): void {
    this.epoch++;
    this.cursor = null;
    this.starting = null;
    this.books.clear();
    this.blocks.clear();
  }

  /**
   * An entry this handle has just committed (called right after the commit, before anything else runs). When it is
   * the entry right after the cursor, it is folded now and no read brings it back; otherwise someone else's entries
   * lie between, and the next read brings them all.
   */
  committed(seq: number, entry: AuditEntry): void {
    if (!this.opts.headFirst || this.cursor === null || seq !== this.cursor + 1) return;
    this.fold(seq, entry);
  }

  /** Folds in one entry of the chain, unless a read or a commit already did. */
  private fold(seq: number, entry: AuditEntry): void {
    if (this.cursor !== null && seq <= this.cursor) return;
    const held = this.books.get(entry.key);
    if (held?.buffer) held.buffer.push(entry);
    else held?.book.add(entry);
    if (this.blocks.size > 0) this.foldBlocks(entry);
    this.cursor = seq;
  }

  /** An entry into the books of the credential blocks it concerns: an intent naming them, or a final of one. */
  private foldBlocks(entry: AuditEntry): void {
    const named = entry.command === 'sign-intent' ? (entry.budget_blocks ?? []) : [];
    const final = entry.command === 'sign' && entry.signature !== null;
    if (named.length === 0 && !final) return;
    for (const [id, held] of this.blocks) {
      if (!named.includes(id) && !final) continue;
      if (held.buffer) held.buffer.push(entry);
      else addToBlock(held.book, id, entry);
    }
  }

  /** Starts loading a key's book from the entries up to the cursor; those folded meanwhile wait in its buffer. */
  private load(name: string, now: number, kind: 'key' | 'block'): HeldBook {
    const held: HeldBook = { book: new UsageBook(), asOf: now, buffer: [], ready: Promise.resolve() };
    const map = kind === 'key' ? this.books : this.blocks;
    map.set(name, held);
    const through = this.cursor ?? 0;
    const since = now - USAGE_HORIZON_S;
    const add =
      kind === 'key' ? (e: AuditEntry) => held.book.add(e) : (e: AuditEntry) => addToBlock(held.book, name, e);
    const read =
      kind === 'key'
        ? this.source.keySignEntries(name, since, through)
        : this.source.blockSignEntries(name, since, through);
    held.ready = read.then(
      (entries) => {
        for (const e of entries) add(e);
        for (const e of held.buffer ?? []) add(e);
        held.buffer = null;
      },
      (e: unknown) => {
        if (map.get(name) === held) map.delete(name);
        throw e;
      },
    );
    return held;
  }
}

/**
 * A block's book takes the intents that name it and the finals of its own intents only (matched by signature while
 * the intent is open): a final of another intent is no spend of this block's, where in a key's book a final without
 * its intent counts as unbounded.
 */
function addToBlock(book: UsageBook, revocationId: string, e: AuditEntry): void {
  if (e.command === 'sign-intent') {
    if (e.budget_blocks?.includes(revocationId) === true) book.add(e);
  } else if (e.command === 'sign' && e.signature !== null && book.inFlight(e.signature)) book.add(e);
}
