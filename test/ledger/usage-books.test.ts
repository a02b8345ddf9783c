/**
 * UsageBooks over a chain kept in this test (the real stores run the contract in contract.ts): what a read asks
 * of its source when the head is read first, that reads finishing out of order fold every entry once, and that a
 * reset after a failover reads the chain anew.
 */
import { UsageBooks, type UsageSource } from '../../src/ledger/usage-books';
import { usageOf } from '../../src/ledger/usage-book';
import type { AuditEntry } from '../../src/ledger/types';
import { sealEntry } from '../../src/ledger/hash-chain';
import { intentInput } from './helpers';

const NOW = 5_000_000;

/** A chain in memory; each call is counted, and a read may be held until the test lets it go. */
class Chain implements UsageSource {
  entries: { seq: number; entry: AuditEntry }[] = [];
  calls = { head: 0, entries: 0, key: 0 };
  /** Set by holdNext: the next read of that kind answers with what it found when made, once the test releases it. */
  private holding: { kind: 'head' | 'entries'; held: (release: () => void) => void } | null = null;

  /** Resolves, once the next read of `kind` is made, to what lets that read go on. */
  holdNext(kind: 'head' | 'entries'): Promise<() => void> {
    return new Promise((held) => (this.holding = { kind, held }));
  }

  private answer<T>(kind: 'head' | 'entries', value: T): Promise<T> {
    const holding = this.holding;
    if (holding?.kind !== kind) return Promise.resolve(value);
    this.holding = null;
    return new Promise((resolve) => holding.held(() => resolve(value)));
  }

  add(i: number): { seq: number; entry: AuditEntry } {
    const entry = sealEntry(intentInput({ ts: NOW - 10, key: 'k', signature: `s${i}`, balance_change: -(i + 1) }), '');
    const row = { seq: this.entries.length + 1, entry };
    this.entries.push(row);
    return row;
  }

  headSeq(): Promise<number> {
    this.calls.head++;
    return this.answer('head', this.entries.length);
  }

  signEntriesAfter(after: number, limit: number) {
    this.calls.entries++;
    return this.answer('entries', this.entries.filter((r) => r.seq > after).slice(0, limit));
  }

  keySignEntries(key: string, since: number, through: number) {
    this.calls.key++;
    return Promise.resolve(
      this.entries.filter((r) => r.entry.key === key && r.entry.ts >= since && r.seq <= through).map((r) => r.entry),
    );
  }

  blockSignEntries(id: string, since: number, through: number) {
    const named = (e: AuditEntry) => e.command === 'sign-intent' && e.budget_blocks?.includes(id) === true;
    const signatures = new Set(this.entries.filter((r) => named(r.entry)).map((r) => r.entry.signature));
    return Promise.resolve(
      this.entries
        .filter((r) => r.entry.ts >= since && r.seq <= through)
        .filter((r) => named(r.entry) || (r.entry.command === 'sign' && signatures.has(r.entry.signature)))
        .map((r) => r.entry),
    );
  }
}

const fresh = (c: Chain) =>
  usageOf(
    c.entries.map((r) => r.entry),
    NOW,
  );

describe('UsageBooks', () => {
  it('with the head read first, reads no entries while the only writes are its own commits', async () => {
    const chain = new Chain();
    const books = new UsageBooks(chain, { headFirst: true });
    await books.usage('k', NOW); // loads the key's book
    const before = { ...chain.calls };
    for (let i = 0; i < 5; i++) {
      const { seq, entry } = chain.add(i);
      books.committed(seq, entry);
      expect(await books.usage('k', NOW)).toEqual(fresh(chain));
    }
    expect(chain.calls.entries).toBe(before.entries);
    expect(chain.calls.head).toBe(before.head + 5);
  });

  it('reads the entries when someone else wrote, and a commit after a gap waits for that read', async () => {
    const chain = new Chain();
    const books = new UsageBooks(chain, { headFirst: true });
    await books.usage('k', NOW);
    chain.add(0); // another process's entry: this handle is not told
    const mine = chain.add(1);
    books.committed(mine.seq, mine.entry); // not right after the cursor: left for the read
    const entriesReads = chain.calls.entries;
    expect(await books.usage('k', NOW)).toEqual(fresh(chain));
    expect(chain.calls.entries).toBe(entriesReads + 1);
  });

  for (const kind of ['head', 'entries'] as const) {
    it(`a read held at its ${kind} read while another read folds newer entries folds nothing twice`, async () => {
      const chain = new Chain();
      const books = new UsageBooks(chain, { headFirst: true });
      await books.usage('k', NOW);
      chain.add(0);
      const holding = chain.holdNext(kind);
      const slow = books.usage('k', NOW);
      const release = await holding; // made with the chain at seq 1, and held
      chain.add(1);
      chain.add(2);
      expect(await books.usage('k', NOW)).toEqual(fresh(chain)); // folds seq 1 to 3
      release(); // the slow read goes on with what it found at seq 1, behind the cursor now
      expect(await slow).toEqual(fresh(chain));
      chain.add(3); // someone else's: a read folds it, and none of seq 1 to 3 again
      expect(await books.usage('k', NOW)).toEqual(fresh(chain));
    });
  }

  it('after a failover that lost the last entries, reset reads the shorter chain anew and sees what reuses their numbers', async () => {
    const chain = new Chain();
    const books = new UsageBooks(chain);
    for (let i = 0; i < 3; i++) chain.add(i);
    await books.usage('k', NOW); // cursor at 3
    chain.entries = chain.entries.slice(0, 1); // the promoted standby had only the first
    chain.add(10); // seq 2 again, on the new primary: behind the cursor
    expect(await books.usage('k', NOW)).not.toEqual(fresh(chain)); // what reset is for
    books.reset();
    expect(await books.usage('k', NOW)).toEqual(fresh(chain));
    chain.add(11);
    expect(await books.usage('k', NOW)).toEqual(fresh(chain));
  });

  it('without the head read first, every read reads the entries and commits are left to it', async () => {
    const chain = new Chain();
    const books = new UsageBooks(chain);
    await books.usage('k', NOW);
    const { seq, entry } = chain.add(0);
    books.committed(seq, entry);
    const before = { ...chain.calls };
    expect(await books.usage('k', NOW)).toEqual(fresh(chain));
    expect(chain.calls).toEqual({ ...before, entries: before.entries + 1 });
  });
});
