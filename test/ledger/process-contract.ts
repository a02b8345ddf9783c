/**
 * What every store must survive across processes, run against each store with real child processes (procs.ts):
 * appends from two processes form one chain, a process SIGKILLed while appending or while creating the schema
 * leaves a store that opens and verifies with every durable entry, and a key lock held by a process that dies is
 * freed. `sqlite.test.ts` and `postgres.test.ts` run it, each adding the tests only its store has.
 */
import type { LedgerConfig } from '../../src/config/types';
import { openLedger, type OpenLedgerOptions } from '../../src/ledger/open';
import type { Ledger } from '../../src/ledger/types';
import { stillPending } from '../support/async';
import { signInput } from './helpers';
import { Worker, buildLedger } from './procs';

/** One fresh, empty store for a test. */
export interface FreshStore {
  cfg: LedgerConfig;
  remove(): Promise<void>;
}

export interface ProcessStore<S extends FreshStore> {
  /** The store's name in test titles. */
  name: string;
  tag: 'sqlite' | 'postgres';
  create(): Promise<S>;
  opts: OpenLedgerOptions;
  /** Waits until whatever a killed worker had in flight has settled (a server may still be committing it). */
  settled(w: Worker, store: S): Promise<void>;
  /** When to kill processes opening a new store (ms after each starts), spread over its migrations. */
  migrationKillDelaysMs: number[];
}

/** The test's world: its fresh store, ledgers opened on it here, and workers on it in other processes. */
export interface ProcessWorld<S extends FreshStore> {
  store: () => S;
  open: () => Promise<Ledger>;
  worker: (args: string[]) => Worker;
}

export function processContract<S extends FreshStore>(
  p: ProcessStore<S>,
  specifics: (world: ProcessWorld<S>) => void = () => undefined,
): void {
  describe(`${p.name} across processes`, () => {
    let build: ReturnType<typeof buildLedger>;
    let store: S;
    const workers: Worker[] = [];
    const ledgers: Ledger[] = [];

    beforeAll(() => {
      build = buildLedger(p.tag);
    }, 120_000);
    afterAll(() => build.cleanup());
    beforeEach(async () => {
      store = await p.create();
    });
    afterEach(async () => {
      for (const w of workers.splice(0)) await w.kill();
      for (const l of ledgers.splice(0)) await l.close();
      await store.remove();
    });
    const world: ProcessWorld<S> = {
      store: () => store,
      open: async () => {
        const l = await openLedger(store.cfg, p.opts);
        ledgers.push(l);
        return l;
      },
      worker: (args) => {
        const w = new Worker(build.openJs, store.cfg, args);
        workers.push(w);
        return w;
      },
    };
    const { open, worker } = world;

    it('two processes appending at once to a new store build one chain that verifies', async () => {
      const a = worker(['append', '150', 'a']);
      const b = worker(['append', '150', 'b']);
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
      expect(await (await open()).verify()).toEqual({ ok: true, entries: 300 });
    });

    it.each([1, 7, 40, 'random'] as const)(
      'a process SIGKILLed while appending (after %s) leaves a chain that verifies and keeps every durable entry',
      async (point) => {
        const ledger = await open();
        await ledger.append(signInput({ ts: 1 }));
        const w = worker(['append', '100000', 'k']);
        if (point === 'random') {
          await w.waitFor((l) => l === 'ready');
          await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 80)));
        } else await w.waitFor((l) => l === `appended ${point}`);
        await w.kill();
        await p.settled(w, store);
        const durable = w.lastAppended();
        const r = await ledger.verify();
        expect(r.ok).toBe(true);
        expect(r.entries).toBeGreaterThanOrEqual(1 + durable);
        // The chain still takes appends after the crash.
        await ledger.append(signInput({ ts: 2 }));
        expect(await ledger.verify()).toMatchObject({ ok: true, entries: r.entries + 1 });
      },
    );

    it('processes SIGKILLed while creating a new store (migrations) leave one that opens and verifies', async () => {
      for (const delay of p.migrationKillDelaysMs) {
        const w = worker(['append', '100000', 'm']);
        await new Promise((r) => setTimeout(r, delay));
        await w.kill();
      }
      expect((await (await open()).verify()).ok).toBe(true);
    });

    it("a process's key lock keeps another waiting, and is freed when that process is killed", async () => {
      const ledger = await open();
      const w = worker(['lock', 'game']);
      await w.waitFor((l) => l === 'locked');
      const mine = ledger.lockKey('game');
      expect(await stillPending(mine, 300)).toBe(true);
      const other = await ledger.lockKey('other');
      await other.release();
      await w.kill();
      await (await mine).release();
    });

    specifics(world);
  });
}
