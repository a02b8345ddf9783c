/**
 * Halts as this process enforces them. A halt lives in the ledger, where `key show`, `resume` and every replica see
 * it. When the ledger cannot record one, the caller is told (the halt tool reports an error) and this process
 * holds the halt itself: it refuses signs for that key and keeps trying to write the halt, on every look-up and
 * on a timer, until the ledger takes it. From then on the ledger's record is the only one, so a resume from any
 * process lifts it. A resume here first writes a held halt, then lifts it, so the audit log shows both.
 *
 * A held halt is also kept in a file of the state directory (held-halts-file.ts) until the ledger takes it, so a
 * restart while the ledger still refuses it does not lose it: the next start holds it again from the file, refuses
 * the key, and writes it to the ledger as soon as it can.
 */
import type { HaltRecord, Ledger } from '../ledger/types';
import { keyHalted, keyResumed } from '../notify/events';
import { noNotifier, type Notifier } from '../notify/outbox';
import { SignerError, errorMessage } from '../util/errors';
import { nowSeconds } from '../util/time';
import type { EngineLogger } from './engine-deps';
import type { HeldHaltsFile } from './held-halts-file';

export type HaltWrite = { recorded: true; stored: HaltRecord } | { recorded: false; error: string };

export interface HaltBook {
  /** The halt in force for the key: one held here (written to the ledger first if it now can be), else the ledger's. */
  current(key: string): Promise<HaltRecord | null>;
  /** A halt held here that the ledger has not taken yet. */
  held(key: string): HaltRecord | null;
  /** Records a halt; when the ledger cannot, holds it here and reports why. Halting a halted key keeps the first. */
  halt(record: HaltRecord): Promise<HaltWrite>;
  /** Lifts the key's halt, held or recorded; false when it was not halted. Throws when the ledger cannot record it. */
  resume(key: string, by: string): Promise<boolean>;
  /** Offers every held halt to the ledger once; resolves when each is recorded or still refused. */
  settle(): Promise<void>;
  /** Stops the retry timer (held halts are not written any more). */
  close(): void;
}

/** How often a held halt is offered to the ledger again when nothing else touches the key. */
export const HELD_HALT_RETRY_MS = 1_000;

export function createHaltBook(deps: {
  ledger: Ledger;
  log: EngineLogger;
  retryMs?: number;
  /** Where held halts outlive this process; none in tests that do not need it. */
  file?: HeldHaltsFile;
  /** Told of each halt the ledger records and each resume (webhooks). */
  notify?: Notifier;
}): HaltBook {
  const { ledger, log, file } = deps;
  const notify = deps.notify ?? noNotifier;
  const held = new Map<string, HaltRecord>();
  /** The held halts to the file; a file that cannot be written is logged (the halt still holds in this process). */
  const persist = (): void => {
    try {
      file?.save([...held.values()]);
    } catch (e) {
      log.error({ err: errorMessage(e) }, 'held halts could not be written to the state directory');
    }
  };
  const writing = new Map<string, Promise<HaltWrite>>();
  let timer: NodeJS.Timeout | null = null;

  /** One write at a time per key, so a retry never races another into a second audit entry. */
  const write = (record: HaltRecord): Promise<HaltWrite> => {
    const running = writing.get(record.key);
    if (running) return running;
    const attempt = ledger.halt(record).then(
      async (stored): Promise<HaltWrite> => {
        if (held.get(record.key) === record) {
          held.delete(record.key);
          persist();
        }
        // Only the halt this write recorded: halting a halted key keeps (and already told of) the first, and a halt
        // carried over from an archived ledger was told of when it was pulled.
        if (stored.ts === record.ts && stored.by === record.by && record.carried_from === undefined)
          await notify.emit(keyHalted(stored));
        return { recorded: true, stored };
      },
      (e: unknown): HaltWrite => ({ recorded: false, error: errorMessage(e) }),
    );
    const done = attempt.finally(() => writing.delete(record.key));
    writing.set(record.key, done);
    return done;
  };

  const writeHeld = async (key: string): Promise<HaltWrite | null> => {
    const record = held.get(key);
    if (!record) return null;
    const result = await write(record);
    if (result.recorded) log.warn({ key }, 'a halt held in memory is now recorded in the ledger');
    return result;
  };

  const retryAll = (): void => {
    for (const key of [...held.keys()]) void writeHeld(key);
    if (held.size === 0) stopTimer();
  };
  const startTimer = (): void => {
    if (timer) return;
    timer = setInterval(retryAll, deps.retryMs ?? HELD_HALT_RETRY_MS);
    timer.unref();
  };
  const stopTimer = (): void => {
    if (timer) clearInterval(timer);
    timer = null;
  };

  // Halts an earlier run held and could not record: held again, and offered to the ledger from now on.
  let loaded: HaltRecord[] = [];
  try {
    loaded = file?.load() ?? [];
  } catch (e) {
    log.error({ err: errorMessage(e) }, 'held halts could not be read from the state directory');
  }
  for (const record of loaded) held.set(record.key, record);
  if (held.size > 0) {
    log.warn({ keys: [...held.keys()] }, 'halts held by an earlier run are held again until the ledger records them');
    startTimer();
    retryAll();
  }

  return {
    async current(key) {
      const pending = await writeHeld(key);
      // Once recorded, the ledger is the truth: another process may have lifted the halt since this write
      // committed, before its result reached this process.
      if (pending === null || pending.recorded) return ledger.getHalt(key);
      return held.get(key) ?? null;
    },

    held: (key) => held.get(key) ?? null,

    async halt(record) {
      // Held before the write: the brake holds in this process even while the ledger refuses it.
      const already = held.get(record.key);
      if (!already) held.set(record.key, record);
      const result = await write(already ?? record);
      if (!result.recorded) {
        persist();
        startTimer();
        log.error(
          { key: record.key, err: result.error },
          'halt held in memory: the ledger could not record it; signs stay refused and it is retried',
        );
      }
      return result;
    },

    async resume(key, by) {
      const pending = await writeHeld(key);
      if (pending !== null && !pending.recorded) {
        throw new SignerError(
          'ledger',
          `key "${key}" is halted by this process and the ledger still cannot record that (${pending.error}); nothing was resumed, try again once the ledger is writable`,
        );
      }
      const ts = nowSeconds();
      const lifted = await ledger.resume(key, by, ts);
      if (lifted) await notify.emit(keyResumed(key, by, ts));
      return lifted;
    },

    async settle() {
      await Promise.all([...held.keys()].map(writeHeld));
    },

    close: stopTimer,
  };
}
