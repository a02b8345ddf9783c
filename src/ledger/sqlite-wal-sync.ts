/**
 * Group commit for the SQLite ledger. Its connection commits with synchronous=NORMAL, which in WAL mode writes
 * each transaction's frames to the write-ahead log without waiting for the disk; a write resolves only once an
 * fsync of the log that began after its commit has finished. The fsync runs in libuv's thread pool, so the event
 * loop never waits for the disk, and every write committed while one fsync runs shares the next one: under load a
 * single fsync makes a whole batch of intents and finals durable. Durability is what synchronous=FULL gives (a
 * write is on disk before it resolves); only the wait moved off the event loop and is shared.
 *
 * An fsync of any descriptor of the file flushes all of the file's written pages, so a descriptor of our own is
 * as good as SQLite's. It is opened at the first fsync (the log exists once something was written) and kept: SQLite
 * removes the log only when the last connection to the database closes, and the ledger's own stays open until
 * close() closes this too.
 */
import fs from 'node:fs/promises';

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

export class WalSync {
  private waiting: Waiter[] = [];
  private running = false;
  private handle: fs.FileHandle | null = null;
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

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        // Those waiting now committed before this fsync starts; whoever arrives meanwhile waits for the next.
        const batch = this.waiting;
        this.waiting = [];
        try {
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
    await this.durable().catch(() => undefined);
    await this.handle?.close();
    this.handle = null;
  }
}
