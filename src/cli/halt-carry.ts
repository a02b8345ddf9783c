/**
 * The embedded default's fresh ledger keeps the halts. Each start moves the previous run's ledger aside
 * (ledger-archive.ts) because its spend and signatures describe a chain that no longer exists; a halt does not: it
 * is a decision about a key that only an operator's resume takes back. So the halts of the ledger being moved are
 * recorded in the fresh one as they were (key, reason, who, when), each halt's audit entry naming the archive it
 * came from, and `key show`, the gate and `resume` find them like any other halt.
 *
 * They travel through the held-halts file (signer/held-halts-file.ts), written before the old ledger moves: a start
 * cut short anywhere after that finds them there, and the halt book writes them to the ledger as it writes every
 * halt a ledger could not take at once. Halts that file held already (pulled while the old ledger was locked) are
 * written along with them, before the engine opens.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SignerConfig } from '../config/types';
import { openLedger } from '../ledger/open';
import type { HaltRecord } from '../ledger/types';
import { createOutbox } from '../notify/outbox';
import type { EngineLogger } from '../signer/engine-deps';
import { createHaltBook } from '../signer/halts';
import { heldHaltsFile, type HeldHaltsFile } from '../signer/held-halts-file';
import { SignerError, errorMessage } from '../util/errors';
import { archiveLedger, archivedLedgerPath } from './ledger-archive';

/**
 * Moves the SQLite ledger at `ledgerPath` to state/previous-runs/ and records its halts, and any held ones, in the
 * fresh ledger. Returns the archive's path, or null when there was no ledger. When the old ledger's halts cannot be
 * read, or cannot be kept in the state directory, nothing is moved and the start stops with a `ledger` error.
 */
export async function archiveKeepingHalts(
  config: SignerConfig,
  ledgerPath: string,
  log: (line: string) => void,
  now: Date = new Date(),
): Promise<string | null> {
  const file = heldHaltsFile(config.state_dir);
  let archived: string | null = null;
  let carried: HaltRecord[] = [];
  if (fs.existsSync(ledgerPath)) {
    const from = path.relative(config.state_dir, archivedLedgerPath(ledgerPath, config.state_dir, now));
    carried = (await haltsOf(ledgerPath)).map((h): HaltRecord => ({ ...h, carried_from: from }));
    if (carried.length > 0) keep(file, carried);
    archived = archiveLedger(ledgerPath, config.state_dir, now);
    if (archived !== null) log(`fresh embedded chain, so a fresh ledger: the previous run's ledger is now ${archived}`);
  }
  // Also when there was no ledger to move: a start cut short after the move left its halts in the file.
  await recordHeld(config, ledgerPath, file, log);
  if (carried.length > 0)
    log(
      `halts carried over to the fresh ledger: ${carried.map((h) => h.key).join(', ')} (halted until an operator runs sa-forge-signer resume KEY)`,
    );
  return archived;
}

/**
 * Adds the halts to carry to the held-halts file. The old ledger's record of a key wins over one held for it: a
 * held halt of a key the ledger had halted was never the one in force.
 */
function keep(file: HeldHaltsFile, carried: readonly HaltRecord[]): void {
  const keys = new Set(carried.map((h) => h.key));
  const held = readHeld(file).filter((h) => !keys.has(h.key));
  try {
    file.save([...held, ...carried]);
  } catch (e) {
    throw new SignerError(
      'ledger',
      `cannot start a fresh ledger: the previous run's halts cannot be kept in the state directory (${errorMessage(e)}); nothing was moved`,
      { cause: e },
    );
  }
}

/** The halts in force in the ledger about to move. */
async function haltsOf(ledgerPath: string): Promise<HaltRecord[]> {
  try {
    const ledger = await openLedger({ store: 'sqlite', path: ledgerPath });
    try {
      return await ledger.listHalts();
    } finally {
      await ledger.close();
    }
  } catch (e) {
    throw new SignerError(
      'ledger',
      `cannot start a fresh ledger: the halts of the previous run's ledger ${ledgerPath} cannot be read (${errorMessage(e)}), and a halt must outlive the restart; nothing was moved. Repair it, or move it aside yourself to start without its halts (a key it halts could sign again)`,
      { cause: e },
    );
  }
}

function readHeld(file: HeldHaltsFile): HaltRecord[] {
  try {
    return file.load();
  } catch (e) {
    throw new SignerError(
      'ledger',
      `cannot start a fresh ledger: the halts held in the state directory cannot be read (${errorMessage(e)}); nothing was moved. Repair or remove the file`,
      { cause: e },
    );
  }
}

/**
 * Writes the held halts to the fresh ledger through the halt book, hooks told of those never recorded before. One
 * the ledger still refuses stays in the file for the engine's halt book to write.
 */
async function recordHeld(
  config: SignerConfig,
  ledgerPath: string,
  file: HeldHaltsFile,
  log: (line: string) => void,
): Promise<void> {
  if (heldKeys(file).length === 0) return;
  const errors: EngineLogger = {
    info() {},
    warn() {},
    error: (o, msg) => log(`${msg ?? 'error'}: ${JSON.stringify(o)}`),
  };
  const ledger = await openLedger({ store: 'sqlite', path: ledgerPath });
  try {
    const notify = createOutbox({ ledger, hooks: config.notify?.hooks ?? [], log: errors });
    const book = createHaltBook({ ledger, log: errors, file, notify });
    await book.settle();
    book.close();
  } finally {
    await ledger.close();
  }
  const still = heldKeys(file);
  if (still.length > 0)
    log(`halts the fresh ledger did not take yet, held and retried by the service: ${still.join(', ')}`);
}

/** The keys the file holds halts for; none when it cannot be read (the engine's halt book logs that). */
function heldKeys(file: HeldHaltsFile): string[] {
  try {
    return file.load().map((h) => h.key);
  } catch {
    return [];
  }
}
