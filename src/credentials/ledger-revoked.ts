/**
 * The credential blocks revoked in the ledger (the console's revocations), as a set the synchronous verifier can
 * read. Each process keeps its own copy: read at start, read again every `pollMs` (so a revocation another replica
 * wrote applies here within that window), and added to at once when this process writes one. A failed read keeps the
 * last set (the ledger is what signs need anyway) and is logged; the next poll tries again.
 */
import type { Logger } from 'pino';
import type { CredentialRevocation, Ledger } from '../ledger/types';
import { errorMessage } from '../util/errors';

export interface LedgerRevoked {
  /** The revocation ids the ledger held at the last read, with this process's own since. */
  ids(): ReadonlySet<string>;
  /** Resolves once the ledger has been read once: until then no credential is judged. */
  loaded(): Promise<void>;
  /** Records the revocation in the ledger (and its audit entry), and refuses its blocks here from now on. */
  revoke(rec: CredentialRevocation): Promise<CredentialRevocation>;
  /** Every revocation in the ledger, oldest first (the console's list). */
  list(): Promise<CredentialRevocation[]>;
  /** Reads the ledger now. */
  refresh(): Promise<void>;
  /** Stops polling. */
  close(): void;
}

export function ledgerRevoked(opts: { ledger: () => Promise<Ledger>; pollMs: number; logger: Logger }): LedgerRevoked {
  let ids: ReadonlySet<string> = new Set();
  let markLoaded!: () => void;
  const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
  let failing = false;
  let running: Promise<void> | null = null;

  const read = async (): Promise<void> => {
    try {
      const rows = await (await opts.ledger()).listCredentialRevocations();
      // A revocation this process wrote while the read was in flight stays: the ledger has it too. The set is
      // replaced only when it grew, so the verifier's union of it with the config's is not remade every poll.
      const stored = rows.map((r) => r.revocation_id);
      if (stored.some((id) => !ids.has(id))) ids = new Set([...ids, ...stored]);
      markLoaded();
      if (failing) opts.logger.info('credential revocations read from the ledger again');
      failing = false;
    } catch (e) {
      if (!failing) opts.logger.warn({ err: errorMessage(e) }, 'cannot read credential revocations from the ledger');
      failing = true;
    }
  };
  // One read at a time: a slow ledger never piles polls up.
  const refresh = (): Promise<void> => (running ??= read().finally(() => (running = null)));

  void refresh();
  const timer = setInterval(() => void refresh(), opts.pollMs);
  timer.unref();

  return {
    ids: () => ids,
    loaded: () => loaded,
    async revoke(rec) {
      const kept = await (await opts.ledger()).revokeCredential(rec);
      ids = new Set([...ids, kept.revocation_id]);
      return kept;
    },
    async list() {
      return (await opts.ledger()).listCredentialRevocations();
    },
    refresh,
    close: () => clearInterval(timer),
  };
}
