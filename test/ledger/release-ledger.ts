/**
 * A ledger the current release wrote (fixtures/*-release-ledger.sql, dumped from a ledger that release's build
 * made with fixtures/make-release-ledger.js), opened by this code: its intents get their watch columns from the
 * detail text they were written with, in place, and the chain still verifies, old entries and new alike.
 * `sqlite.test.ts` and `postgres.test.ts` run it on a store loaded from their dump.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { KeyConfig, LedgerConfig } from '../../src/config/types';
import { exportJsonl, verifyJsonlFile } from '../../src/ledger/hash-chain';
import { openLedger, type OpenLedgerOptions } from '../../src/ledger/open';
import type { AuditEntry, IntentWatch } from '../../src/ledger/types';
import { intentWatch, pendingIntents, sentIntentDetail } from '../../src/signer/flow/intent-watch';
import { intentInput } from './helpers';

/** The fee payer the fixture's foreign intents name. */
const FEE_PAYER = 'FeePayer1111111111111111111111111111111111';

export interface LoadedStore {
  cfg: LedgerConfig;
  remove(): Promise<void>;
}

async function collect(it: AsyncIterable<AuditEntry>): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of it) out.push(e);
  return out;
}

export function releaseLedgerContract(name: string, load: () => Promise<LoadedStore>, opts: OpenLedgerOptions): void {
  describe(`${name}: a ledger written by the current release (intents without watch columns)`, () => {
    let store: LoadedStore;
    beforeEach(async () => {
      store = await load();
    });
    afterEach(() => store.remove());

    it('converts its intents in place: each reads back with the watch its detail named, and the chain verifies', async () => {
      const ledger = await openLedger(store.cfg, opts);
      try {
        expect(await ledger.verify()).toEqual({ ok: true, entries: 7 });
        const entries = await collect(ledger.entries());
        const watches = Object.fromEntries(entries.map((e) => [`${e.command} ${e.signature ?? ''}`, e.watch ?? null]));
        const watch = (
          mode: IntentWatch['mode'],
          height: number,
          feePayer: string | null,
          fromSlot: number | null,
        ) => ({
          mode,
          last_valid_block_height: height,
          fee_payer: feePayer,
          from_slot: fromSlot,
        });
        expect(watches).toEqual({
          'sign-intent sent-1': watch('send', 1000, null, null),
          'sign-intent only-1': watch('sign_only', 2000, null, null),
          'sign-intent only-2': watch('sign_only', 2500, null, null),
          'sign only-2': null,
          'sign-intent only-3': watch('sign_only', 3000, FEE_PAYER, 77),
          'sign-intent only-4': watch('sign_only', 4000, FEE_PAYER, null),
          'sign-intent sent-0': null,
        });
        // The text stays as it was written: it is part of each entry's hash, and a reader still reads it.
        expect(entries[0]!.detail).toBe(sentIntentDetail(1000));

        // The watcher picks up what is still open from the columns alone.
        const open = pendingIntents(entries, { name: 'game' } as KeyConfig, { confirm_deadline_ms: 150_000 });
        expect(open.map((w) => [w.signature, w.orphan, w.lastValidBlockHeight, w.feePayer, w.fromSlot])).toEqual([
          ['sent-1', true, 1000, null, 0],
          ['only-1', false, 2000, null, 0],
          ['only-3', false, 3000, FEE_PAYER, 77],
          ['only-4', false, 4000, FEE_PAYER, 0],
        ]);
      } finally {
        await ledger.close();
      }
    });

    it('keeps taking entries: a new intent carries its watch, and old and new verify, in the store and exported', async () => {
      const ledger = await openLedger(store.cfg, opts);
      const dir = mkdtempSync(path.join(tmpdir(), 'release-ledger-'));
      try {
        const foreign = { feePayer: FEE_PAYER, fromSlot: 9 };
        const appended = await ledger.append(
          intentInput({
            ts: 1_700_000_100,
            signature: 'only-5',
            watch: intentWatch('sign_only', 5000, foreign),
          }),
        );
        expect(appended.watch).toEqual(intentWatch('sign_only', 5000, foreign));
        const [last] = await ledger.tail(1);
        expect(last).toEqual(appended);
        expect(await ledger.verify()).toEqual({ ok: true, entries: 8 });
        const file = path.join(dir, 'audit.jsonl');
        expect(await exportJsonl(ledger.entries(), file)).toBe(8);
        expect(await verifyJsonlFile(file, await ledger.head())).toEqual({ ok: true, entries: 8 });
      } finally {
        await ledger.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
