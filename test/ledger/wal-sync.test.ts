/**
 * Group commit's fsync scheduling (src/ledger/sqlite-wal-sync.ts): a write that finds no fsync running starts one,
 * those that arrive while it runs share the next, and a log file not yet written is nothing to sync.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WalSync } from '../../src/ledger/sqlite-wal-sync';

describe('WalSync', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wal-sync-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("starts the first write's fsync at once, and the 50 that arrive while it runs share the next one", async () => {
    const file = path.join(dir, 'ledger.sqlite-wal');
    fs.writeFileSync(file, 'frames');
    const sync = new WalSync(file);
    const first = sync.durable();
    // These committed after the first fsync may have begun, so it cannot vouch for them: they need the next.
    const meanwhile = Array.from({ length: 50 }, () => sync.durable());
    await Promise.all([first, ...meanwhile]);
    expect(sync.syncs).toBe(2);
    await sync.durable();
    expect(sync.syncs).toBe(3);
    await sync.close();
  });

  it('resolves when there is no log file yet (nothing was written through it)', async () => {
    const sync = new WalSync(path.join(dir, 'absent-wal'));
    await expect(sync.durable()).resolves.toBeUndefined();
    await sync.close();
  });
});
