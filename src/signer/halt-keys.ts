/**
 * Pulling the brake on keys: one halt record per key, through the halt book (the ledger, or held in this process
 * when the ledger cannot record it). The engine's `halt` tool and the host's `sa-forge-signer halt` both come here;
 * the CLI needs no engine for it, so it never starts a watcher of its own beside a running service.
 */
import type { KeyConfig } from '../config/types';
import type { HaltRecord } from '../ledger/types';
import { SignerError } from '../util/errors';
import { nowSeconds } from '../util/time';
import type { HaltBook } from './halts';
import type { HaltResult } from './types';

export const MAX_HALT_REASON = 1000;

export async function haltKeys(
  halts: HaltBook,
  keys: readonly KeyConfig[],
  reason: string,
  by: string,
): Promise<HaltResult> {
  const why = reason.trim();
  if (why.length === 0) throw new SignerError('request_invalid', 'a halt needs a reason');
  if (why.length > MAX_HALT_REASON)
    throw new SignerError('request_invalid', `a halt reason is at most ${MAX_HALT_REASON} characters`);
  const result: HaltResult = { halted: [], not_recorded: [] };
  for (const key of keys) {
    const record: HaltRecord = { key: key.name, reason: why, by, ts: nowSeconds() };
    const written = await halts.halt(record);
    if (!written.recorded) {
      result.not_recorded.push({ key: key.name, error: written.error });
      continue;
    }
    const { stored } = written;
    const already = stored.ts !== record.ts || stored.reason !== record.reason || stored.by !== record.by;
    result.halted.push({ ...stored, already_halted: already });
  }
  return result;
}
