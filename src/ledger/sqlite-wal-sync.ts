/**
 * Group commit for the SQLite ledger. Its connection commits with synchronous=NORMAL, which in WAL mode writes
 * each transaction's frames to the write-ahead log without waiting for the disk; a write resolves only once an
 * fsync of the log that began after its commit has finished. The fsync runs in libuv's thread pool, so the event
 * loop never waits for the disk, and every write committed while one fsync runs shares the next one: under load a
 * single fsync makes a whole batch of intents and finals durable. Durability is what synchronous=FULL gives (a
 * write is on disk before it resolves); only the wait moved off the event loop and is shared.
 *
 * A write that a restarted signer can rebuild from the chain (a sent transaction's final entry) need not wait for
 * the disk: it asks for `soon()` instead, and is made durable by the next fsync anyone starts, or by one of its own
 * at most SOON_MS later, as PostgreSQL's asynchronous commit leaves it to its WAL writer. The log is written in
 * order, so a power cut that takes such a write takes everything after it too, never an entry in the middle.
 *
 * An fsync of any descriptor of the file flushes all of the file's written pages, so a descriptor of our own is
 * as good as SQLite's. It is opened at the first fsync (the log exists once something was written) and kept: SQLite
 * removes the log only when the last connection to the database closes, and the ledger's own stays open until
 * close() closes this too.
 */
import fs from 'node:fs/promises';

/** How long a write that asked for soon() may stay in the page cache alone (PostgreSQL's wal_writer_delay). */
export const SOON_MS = 200;

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

export class WalSync {
  private waiting: Waiter[] = [];
  private running = false;
  private handle: fs.FileHandle | null = null;
  /** Something committed with soon() and no fsync started after it yet. */
  private owed = false;
  private soonTimer: NodeJS.Timeout | null = null;
  /** How many fsyncs ran: fewer than the writes they made durable under load. */
  syncs = 0;

  constructor(private readonly walPath: string) {}

  /** Resolves once everything committed before this call is on disk. */
  durable(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /**
   * Makes everything committed before this call durable within SOON_MS, without waiting for it: by the next fsync
   * that starts anyway, or by one of its own when none does.
   */
  soon(): void {
    this.owed = true;
    if (this.soonTimer !== null) return;
    this.soonTimer = setTimeout(() => {
      this.soonTimer = null;
      // A failed fsync fails the next durable write as well, which reports it; nobody waits on this one.
      if (this.owed) this.durable().catch(() => undefined);
    }, SOON_MS);
    // A process that exits without closing the ledger loses nothing by it: the commit is in the page cache.
    this.soonTimer.unref();
  }

  /** Whether a soon() write still waits for an fsync to start. */
  get owesSync(): boolean {
    return this.owed;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        // Those waiting now committed before this fsync starts; whoever arrives meanwhile waits for the next.
        const batch = this.waiting;
        this.waiting = [];
        try {
          this.owed = false;
          this.syncs++;
          await this.fsync();
          for (const w of batch) w.resolve();
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async fsync(): Promise<void> {
    if (this.handle === null) {
      try {
        this.handle = await fs.open(this.walPath, 'r');
      } catch (e) {
        // No log yet: nothing was written through it.
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
    }
    await this.handle.sync();
  }

  /** Closes the descriptor once the fsyncs under way are done. */
  async close(): Promise<void> {
    if (this.soonTimer !== null) clearTimeout(this.soonTimer);
    this.soonTimer = null;
    await this.durable().catch(() => undefined);
    await this.handle?.close();
    this.handle = null;
  }
}
