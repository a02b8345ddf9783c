/** `sa-forge-signer locks list|clear` on a real SQLite ledger: what the operator reads and what clearing does. */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runLocksCommand } from '../../src/cli/locks';
import { openLedger } from '../../src/ledger/open';
import type { Ledger } from '../../src/ledger/types';
import { containing } from './helpers';

describe('locks list|clear', () => {
  let dir: string;
  let file: string;
  let ledger: Ledger;
  let printed: string[];
  const locks = (words: string[], opts: { force?: boolean; json?: boolean } = {}) =>
    runLocksCommand(
      ledger,
      { words, force: opts.force ?? false, json: opts.json ?? false, keys: ['game', 'wallet'] },
      (t) => printed.push(t),
    );
  /** A lock row left by a process on another host, as a crash would leave it. */
  const crashedHolder = (leaseUntilMs: number | null) => {
    const db = new Database(file);
    db.prepare(
      `INSERT INTO key_locks (key, owner_id, host, pid, start, acquired_at, lease_until_ms)
       VALUES ('wallet', 'x', 'box-2\x1b[2J', 77, NULL, 1700000000, ?)`,
    ).run(leaseUntilMs);
    db.close();
  };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'locks-cli-'));
    file = path.join(dir, 'ledger.db');
    ledger = await openLedger({ store: 'sqlite', path: file }, { sqlite: { lockPollMs: 5 } });
    printed = [];
  });
  afterEach(async () => {
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists held and stale locks with their holder and lease, escaping what the store holds', async () => {
    expect(await locks(['list'])).toBe(0);
    expect(printed).toEqual(['no key locks held']);
    const held = await ledger.lockKey('game');
    crashedHolder(Date.now() - 1_000);
    printed = [];
    expect(await locks(['list'])).toBe(0);
    const lines = printed[0]!.split('\n');
    expect(lines[0]).toMatch(/^KEY\s+STATE\s+HOLDER\s+ACQUIRED\s+LEASE UNTIL$/);
    expect(lines[1]).toMatch(/^game\s+held\s+\S+\/\d+\s+\d{4}-\d\d-\d\dT\S+Z\s+\d{4}-\d\d-\d\dT\S+Z$/);
    expect(lines[2]).toMatch(/^wallet\s+stale\s+box-2\\x1b\[2J\/77\s+2023-11-14T22:13:20.000Z\s+\S+Z$/);
    printed = [];
    expect(await locks(['list'], { json: true })).toBe(0);
    expect(JSON.parse(printed[0]!)).toEqual([
      expect.objectContaining({ key: 'game', state: 'held' }),
      expect.objectContaining({ key: 'wallet', state: 'stale', holder: 'box-2\x1b[2J/77' }),
    ]);
    await held.release();
  });

  it('clears a stale lock; refuses a live one without --force and says how; --force clears it', async () => {
    crashedHolder(Date.now() - 1);
    expect(await locks(['clear', 'wallet'])).toBe(0);
    expect(printed).toEqual(['cleared the lock on key wallet']);
    crashedHolder(null); // an older signer's row: no lease, on another host, so never stale by itself
    await expect(locks(['clear', 'wallet'])).rejects.toMatchObject({
      code: 'request_invalid',
      message: containing('sa-forge-signer locks clear wallet --force'),
    });
    expect(await locks(['clear', 'wallet'], { force: true })).toBe(0);
    printed = [];
    expect(await locks(['clear', 'wallet'])).toBe(0);
    expect(printed).toEqual(['key wallet is not locked']);
    await (await ledger.lockKey('wallet')).release();
  });

  it('a misspelt subcommand is an error naming the usage', async () => {
    await expect(locks(['lsit'])).rejects.toMatchObject({ message: containing('locks list') });
    await expect(locks(['clear'])).rejects.toMatchObject({ code: 'request_invalid' });
  });
});
