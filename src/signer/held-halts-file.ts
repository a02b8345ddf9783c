/**
 * Halts this process holds because the ledger could not record them, kept in a file of the state directory until
 * the ledger takes them. A restart (or a crash) while the ledger still refuses them would otherwise lose a brake
 * the agent pulled: the next start reads the file, refuses those keys, and writes the halts to the ledger as soon
 * as it can (halts.ts). The file is written whole and renamed into place, so it is never half written.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { HaltRecord } from '../ledger/types';
import { isRecord } from '../util/is-record';

export const HELD_HALTS_FILE = 'held-halts.json';

export interface HeldHaltsFile {
  load(): HaltRecord[];
  save(records: readonly HaltRecord[]): void;
}

export function heldHaltsFile(stateDir: string): HeldHaltsFile {
  const file = path.join(stateDir, HELD_HALTS_FILE);
  return {
    load() {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch {
        return [];
      }
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new Error(`${file} is not a list of halts`);
      return parsed.filter(isHaltRecord);
    },
    save(records) {
      if (records.length === 0) {
        fs.rmSync(file, { force: true });
        return;
      }
      fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(records), { mode: 0o600 });
      fs.renameSync(tmp, file);
    },
  };
}

function isHaltRecord(v: unknown): v is HaltRecord {
  return (
    isRecord(v) &&
    typeof v['key'] === 'string' &&
    typeof v['reason'] === 'string' &&
    typeof v['by'] === 'string' &&
    typeof v['ts'] === 'number' &&
    (v['carried_from'] === undefined || typeof v['carried_from'] === 'string')
  );
}
