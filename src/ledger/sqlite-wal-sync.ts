/**
 * Group commit for the SQLite ledger. Its connection commits with synchronous=NORMAL, which in WAL mode writes
 * each transaction's frames to the write-ahead log without waiting for the disk; a write resolves only once an
 * fsync of the log that began after its commit has finished. The fsync runs in libuv's thread pool, so the event
 * loop never waits for the disk, and every write committed while one fsync runs shares the next one: under load a
 * single fsync makes a whole batch of intents and finals durable. Durability is what synchronous=FULL gives (a
 * write is on disk before it resolves); only the wait moved off the event loop and is shared.
 *
 * An fsync of any descriptor of the file flushes all of the file's written pages, so a descriptor of our own is
 * as good as SQLite's. It is opened for each fsync: SQLite may remove the log when the last connection of any
 * process closes, and a descriptor kept open would then point at a file no longer in use.
 */
import fs from 'node:fs/promises';

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

export class WalSync {
  private waiting: Waiter[] = [];
  private running = false;
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
          await fsyncFile(this.walPath);
          for (const w of batch) w.resolve();
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.running = false;
    }
  }
}

async function fsyncFile(file: string): Promise<void> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (e) {
    // No log file: nothing was written since the last checkpoint removed it, and a checkpoint syncs what it moves.
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
