/**
 * The ledger contract: every store must pass these. `sqlite.test.ts` and `postgres.test.ts` run it with a factory
 * that builds a fresh real store per test.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { GENESIS_PREV, MAX_STORED_SUMMARY, exportJsonl, hashEntry, verifyJsonlFile } from '../../src/ledger/hash-chain';
import type { EnrollmentRecord, PasskeyRecord, SessionRecord } from '../../src/ledger/operators';
import type { ApprovalRecord, AuditEntry, Ledger } from '../../src/ledger/types';
import { SignerError } from '../../src/util/errors';
import { intentInput, signInput, matching } from './helpers';
import { USAGE_HORIZON_S, usageOf } from '../../src/ledger/usage-book';
import { outboxContract } from './outbox-contract';
import { treasuryBaselinesContract } from './treasury-baselines-contract';
import { gateKey, gateOnce } from './gate-race';
import { nowSeconds } from '../../src/util/time';
import { spentLamports } from '../../src/signer/policy/rules/daily-cap';

export interface StoreUnderTest {
  ledger: Ledger;
  /** A second, independent handle on the same store (what another process or replica would open). */
  reopen(): Promise<Ledger>;
  /** Edits the stored ts of the entry at chain position `line`, behind the ledger's back. */
  tamperTs(line: number, ts: number): Promise<void>;
  /** Runs SQL on the store behind the ledger's back (what someone with write access to the database could do). */
  exec(sql: string): Promise<void>;
  dispose(): Promise<void>;
}

async function collect(it: AsyncIterable<AuditEntry>): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for await (const e of it) out.push(e);
  return out;
}

/** Resolves to 'pending' if p has not settled after ms, else to what it settled with. */
async function stateAfter<T>(p: Promise<T>, ms: number): Promise<'pending' | 'resolved' | 'rejected'> {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  await new Promise((r) => setTimeout(r, ms));
  return state;
}

export function ledgerContract(name: string, factory: () => Promise<StoreUnderTest>): void {
  describe(`Ledger contract: ${name}`, () => {
    let s: StoreUnderTest;
    const others: Ledger[] = [];
    const reopen = async () => {
      const l = await s.reopen();
      others.push(l);
      return l;
    };
    beforeEach(async () => {
      s = await factory();
    });
    afterEach(async () => {
      try {
        for (const l of others.splice(0)) await l.close();
      } finally {
        await s.dispose();
      }
    });

    describe('audit chain', () => {
      it('links each appended entry to the previous one and verifies', async () => {
        const { ledger } = s;
        const a = await ledger.append(signInput({ ts: 1 }));
        const b = await ledger.append(intentInput({ ts: 2, signature: 'sig2', balance_change: -600 }));
        const c = await ledger.append(signInput({ ts: 3, signature: 'sig2', balance_change: -5 }));
        expect(a.prev).toBe(GENESIS_PREV);
        expect(b.prev).toBe(a.hash);
        expect(c.prev).toBe(b.hash);
        for (const e of [a, b, c]) expect(e.hash).toBe(hashEntry(e));
        expect(await ledger.verify()).toEqual({ ok: true, entries: 3 });
      });

      it('returns entries in chain order, the tail in order, and exactly what was appended', async () => {
        const { ledger } = s;
        const written = [];
        for (let i = 1; i <= 5; i++)
          written.push(await ledger.append(signInput({ ts: i, programs: ['P1', 'P2'], slot: i, balance_change: -i })));
        expect(await collect(ledger.entries())).toEqual(written);
        expect(await ledger.tail(2)).toEqual(written.slice(3));
        expect(await ledger.tail(50)).toEqual(written);
        expect(await ledger.tail(0)).toEqual([]);
      });

      it('a new handle on the store sees every entry the first one appended (durable, one chain)', async () => {
        await s.ledger.append(signInput({ ts: 1 }));
        const other = await reopen();
        const e = await other.append(signInput({ ts: 2 }));
        expect(e.prev).toBe((await s.ledger.tail(2))[0]!.hash);
        expect(await s.ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it("lists only the key's sign, sign-intent and sign-message entries since a time, for limits", async () => {
        const { ledger } = s;
        await ledger.append(signInput({ ts: 100, key: 'game' }));
        await ledger.append(intentInput({ ts: 200, key: 'game', signature: 's' }));
        await ledger.append(signInput({ ts: 200, key: 'other' }));
        await ledger.halt({ key: 'game', reason: 'stop', by: 'operator', ts: 210 });
        await ledger.append(signInput({ ts: 300, key: 'game', signature: 's' }));
        await ledger.append(signInput({ ts: 310, key: 'game', command: 'sign-message', outcome: 'signed' }));
        const got = await ledger.signEntriesForKey('game', 200);
        expect(got.map((e) => [e.ts, e.command])).toEqual([
          [200, 'sign-intent'],
          [300, 'sign'],
          [310, 'sign-message'],
        ]);
      });

      it('computes key usage in the store exactly as usageOf does over the entries, at any time asked', async () => {
        const { ledger } = s;
        // A day of mixed history for one key, deterministic but irregular: confirmed and failed finals with and
        // without figures, unknowns, refusals, orphans, intents without figures or signatures, another key.
        let seed = 7;
        const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
        const NOW = 200_000;
        for (let i = 0; i < 120; i++) {
          const ts = NOW - 90_000 + rnd(90_060);
          const sig = rnd(10) === 0 ? null : `sig-${i}`;
          const key = rnd(8) === 0 ? 'other' : 'game';
          const reservation = rnd(6) === 0 ? null : -(1_000 + rnd(50_000));
          await ledger.append(intentInput({ ts, key, signature: sig, balance_change: reservation }));
          const fate = rnd(6);
          if (fate === 0) continue; // orphan
          const outcome = ['confirmed', 'failed', 'unknown', 'refused', 'confirmed'][fate - 1]!;
          const actual = rnd(4) === 0 ? null : -(500 + rnd(40_000));
          await ledger.append(signInput({ ts: ts + rnd(120), key, signature: sig, outcome, balance_change: actual }));
          if (rnd(3) === 0) {
            // A message signed or refused now and then: signed ones count in the rate, none in the spend.
            const signed = rnd(2) === 0;
            await ledger.append(
              signInput({
                ts: ts + rnd(90),
                key,
                command: 'sign-message',
                outcome: signed ? 'signed' : 'refused',
                signature: signed ? `msg-${i}` : null,
                balance_change: null,
              }),
            );
          }
        }
        for (const now of [NOW, NOW - 40_000, NOW + 50_000, NOW - 86_000]) {
          const expected = usageOf(await ledger.signEntriesForKey('game', now - USAGE_HORIZON_S), now);
          expect(await ledger.keyUsage('game', now)).toEqual(expected);
        }
      });

      it('keeps key usage current as entries arrive and the window moves, as a fresh count over the entries', async () => {
        const { ledger } = s;
        let seed = 11;
        const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
        const token = (change: number) => [
          { mint: 'USDC', decimals: 6, change: String(change), credits: [{ owner: 'M', amount: String(-change) }] },
        ];
        let now = 1_000_000;
        const open: string[] = [];
        for (let i = 0; i < 160; i++) {
          // Time runs on irregularly, sometimes by most of a day, so entries leave the window between reads.
          now += rnd(5) === 0 ? 20_000 + rnd(40_000) : rnd(30);
          if (open.length > 0 && rnd(2) === 0) {
            const sig = open.splice(rnd(open.length), 1)[0]!;
            const outcome = ['confirmed', 'failed', 'unknown', 'refused'][rnd(4)]!;
            const tokens = rnd(3) === 0 ? token(-(1 + rnd(90))) : null;
            await ledger.append(
              signInput({ ts: now, key: 'game', signature: sig, outcome, balance_change: -rnd(9_000), tokens }),
            );
          } else {
            const sig = rnd(12) === 0 ? null : `s${i}`;
            const reservation = rnd(8) === 0 ? null : -(1 + rnd(10_000));
            const tokens = rnd(3) === 0 ? token(-(1 + rnd(90))) : null;
            await ledger.append(
              intentInput({ ts: now, key: 'game', signature: sig, balance_change: reservation, tokens }),
            );
            if (sig !== null) open.push(sig);
          }
          if (rnd(3) === 0) {
            const fresh = usageOf(await ledger.signEntriesForKey('game', now - USAGE_HORIZON_S), now);
            expect(await ledger.keyUsage('game', now)).toEqual(fresh);
            const probe = open[0];
            if (probe !== undefined) expect(await ledger.signatureInFlight('game', probe)).toBe(true);
          }
        }
      });

      it('counts every entry once when reads of several keys run side by side with appends and first loads', async () => {
        const { ledger } = s;
        const keys = ['k1', 'k2', 'k3'];
        const NOW = 2_000_000;
        const CAP = 1_000_000_000;
        const reads: Promise<unknown>[] = [];
        for (let i = 0; i < 60; i++) {
          const key = keys[i % keys.length]!;
          const appended = ledger.append(
            intentInput({ ts: NOW - 100 + i, key, signature: `c${i}`, balance_change: -(i + 1) }),
          );
          // Not awaited: these reads (the first of each key loads its book) overlap the appends and each other.
          reads.push(...keys.map((k) => ledger.keyUsage(k, NOW)));
          if (i % 7 === 0) await appended;
          else reads.push(appended);
        }
        await Promise.all(reads);
        for (const k of keys) {
          const fresh = usageOf(await ledger.signEntriesForKey(k, NOW - USAGE_HORIZON_S), NOW);
          expect(await ledger.keyUsage(k, NOW)).toEqual(fresh);
          expect(spentLamports(fresh, CAP)).toBeGreaterThan(0);
        }
      });

      it("keeps each handle's usage exact when two handles write the same key, with other entries between", async () => {
        const other = await reopen();
        const handles = [s.ledger, other];
        const NOW = 3_000_000;
        let seed = 29;
        const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
        // Both handles know the key first, so each one's own commits and the other's are folded into a live book.
        for (const h of handles) await h.keyUsage('game', NOW);
        const open: string[] = [];
        for (let i = 0; i < 80; i++) {
          const writer = handles[rnd(2)]!;
          const what = rnd(6);
          if (what === 0) {
            // An entry of another command between two sign entries: the head moves, no usage does.
            await writer.halt({ key: 'other', reason: `r${i}`, by: 'test', ts: NOW - 50 });
            await writer.resume('other', 'test', NOW - 50);
          } else if (open.length > 0 && what === 1) {
            const sig = open.shift()!;
            await writer.append(
              signInput({ ts: NOW - 60 + Math.floor(i / 2), key: 'game', signature: sig, balance_change: -7 }),
            );
          } else {
            const sig = `t${i}`;
            await writer.append(
              intentInput({ ts: NOW - 60 + Math.floor(i / 2), key: 'game', signature: sig, balance_change: -(i + 1) }),
            );
            open.push(sig);
          }
          const reader = handles[rnd(2)]!;
          const fresh = usageOf(await reader.signEntriesForKey('game', NOW - USAGE_HORIZON_S), NOW);
          expect(await reader.keyUsage('game', NOW)).toEqual(fresh);
          if (open[0] !== undefined) expect(await reader.signatureInFlight('game', open[0])).toBe(true);
        }
        for (const h of handles) {
          const fresh = usageOf(await h.signEntriesForKey('game', NOW - USAGE_HORIZON_S), NOW);
          expect(await h.keyUsage('game', NOW)).toEqual(fresh);
          expect(fresh.signsLastMinute).toBeGreaterThan(30);
        }
      });

      it('the cap gate over three handles (processes or replicas) at once: exactly the signs the cap admits pass it', async () => {
        const handles = [s.ledger, await reopen(), await reopen()];
        const spend = 1_000;
        const key = gateKey('gated', 7 * spend);
        // Each handle has read the key once, as a sign's preflight does, so its gates may take either way.
        for (const h of handles) await h.keyUsage(key.name, nowSeconds());
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) => gateOnce(handles[i % handles.length]!, key, spend)),
        );
        expect(results.filter((r) => r.passed).length).toBe(7);
        for (const r of results.filter((r) => !r.passed)) expect(r.report.reason).toBe('per_day_cap');
        const intents = (await s.ledger.signEntriesForKey(key.name, 0)).filter((e) => e.command === 'sign-intent');
        expect(intents).toHaveLength(7);
        for (const h of handles) {
          expect(spentLamports(await h.keyUsage(key.name, nowSeconds()), key.daily_lamport_cap)).toBe(7 * spend);
        }
      });

      it('signatureInFlight: an intent of the key with that signature and no final yet', async () => {
        const { ledger } = s;
        expect(await ledger.signatureInFlight('game', 'sig-a')).toBe(false);
        await ledger.append(intentInput({ key: 'game', signature: 'sig-a' }));
        expect(await ledger.signatureInFlight('game', 'sig-a')).toBe(true);
        expect(await ledger.signatureInFlight('other', 'sig-a')).toBe(false);
        expect(await ledger.signatureInFlight('game', 'sig-b')).toBe(false);
        await ledger.append(signInput({ key: 'game', signature: 'sig-a', outcome: 'confirmed' }));
        expect(await ledger.signatureInFlight('game', 'sig-a')).toBe(false);
      });

      it('stores token figures with the entry, reads them back exactly, and chains them into the hash', async () => {
        const { ledger } = s;
        const tokens = [
          {
            mint: 'MintA',
            decimals: 6,
            change: '-18446744073709551615',
            credits: [{ owner: 'Merchant', amount: '18446744073709551615' }],
          },
        ];
        const plain = await ledger.append(signInput({ ts: 100 }));
        const withTokens = await ledger.append(intentInput({ ts: 101, signature: 'sig-t', tokens }));
        expect(plain).not.toHaveProperty('tokens'); // an entry that moved none hashes as entries always did
        expect(withTokens.tokens).toEqual(tokens);
        const stored = await ledger.tail(2);
        expect(stored.find((e) => e.signature === 'sig-t')?.tokens).toEqual(tokens);
        expect(hashEntry({ ...withTokens, tokens: [{ ...tokens[0]!, change: '-1' }] })).not.toBe(withTokens.hash);
        expect(await ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it("stores an intent's dollar value exactly, chains it into the hash, and counts it in the key usage", async () => {
        const { ledger } = s;
        const now = Math.floor(Date.now() / 1000);
        const big = '9007199254740993'; // above 2^53: stored as text, never through a float
        const valued = await ledger.append(
          intentInput({ ts: now - 2, key: 'game', signature: 'sig-u', balance_change: -5000, usd_micros: big }),
        );
        const plain = await ledger.append(intentInput({ ts: now - 1, key: 'game', signature: 'sig-p' }));
        expect(plain).not.toHaveProperty('usd_micros'); // a key without dollar caps writes entries as before
        const stored = await ledger.tail(2);
        expect(stored.find((e) => e.signature === 'sig-u')?.usd_micros).toBe(big);
        expect(hashEntry({ ...valued, usd_micros: '1' })).not.toBe(valued.hash);
        expect((await ledger.keyUsage('game', now)).usdMicros).toBe(BigInt(big));
        expect(await ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it("keeps a credential block's usage across keys and handles: reserved by intents naming it, released or kept by their finals", async () => {
        const { ledger } = s;
        const now = nowSeconds();
        const child = 'c1'.repeat(64);
        const grand = 'c2'.repeat(64);
        // Two keys sign under the same budgeted block; the grandchild's sign names both blocks.
        await ledger.append(
          intentInput({ ts: now - 9, key: 'a', signature: 'x', balance_change: -40, budget_blocks: [child] }),
        );
        const other = await reopen();
        expect((await other.blockUsage(child, now)).lamports).toBe(40); // loaded from the store
        await ledger.append(
          intentInput({ ts: now - 8, key: 'b', signature: 'y', balance_change: -25, budget_blocks: [child, grand] }),
        );
        await ledger.append(intentInput({ ts: now - 7, key: 'a', signature: 'z', balance_change: -1000 })); // no budget
        expect((await other.blockUsage(child, now)).lamports).toBe(65); // kept current
        expect((await ledger.blockUsage(grand, now)).lamports).toBe(25);
        // Finals: a never-sent one frees its reservation, a confirmed one counts its own figure.
        await ledger.append(
          signInput({ ts: now - 6, key: 'a', signature: 'x', outcome: 'refused', balance_change: null }),
        );
        await ledger.append(
          signInput({ ts: now - 5, key: 'b', signature: 'y', outcome: 'confirmed', balance_change: -20 }),
        );
        await ledger.append(
          signInput({ ts: now - 4, key: 'a', signature: 'z', outcome: 'confirmed', balance_change: -990 }),
        );
        for (const l of [ledger, other, await reopen()]) {
          expect((await l.blockUsage(child, now)).lamports).toBe(20);
          expect((await l.blockUsage(grand, now)).lamports).toBe(20);
          expect((await l.blockUsage(grand, now)).unbounded).toBe(0);
          expect((await l.blockUsage('d0'.repeat(64), now)).lamports).toBe(0);
        }
        expect((await ledger.tail(5)).find((e) => e.signature === 'y')?.budget_blocks).toEqual([child, grand]);
        expect(await ledger.verify()).toEqual({ ok: true, entries: 6 });
      });

      it('fences an append on a further lock (a budget block): a lock lost meanwhile writes nothing', async () => {
        const name = `budget:${'ab'.repeat(64)}`;
        const key = await s.ledger.lockKey('a');
        const block = await s.ledger.lockKey(name);
        await s.ledger.appendFenced(intentInput({ key: 'a', signature: 'f1' }), [name]);
        await block.release();
        await expect(s.ledger.appendFenced(intentInput({ key: 'a', signature: 'f2' }), [name])).rejects.toMatchObject({
          code: 'internal',
        });
        await key.release();
        expect((await s.ledger.tail(5)).map((e) => e.signature)).toEqual(['f1']);
      });

      it('stores the prices an intent was valued at exactly and chains them into the hash', async () => {
        const { ledger } = s;
        const usd_prices = [
          {
            asset: 'SOL',
            decimals: 9,
            amount: '100005000',
            usd_micros: '15000750',
            price: '15000000000',
            conf: '0',
            exponent: -8,
            publish_time: 1_800_000_000,
            account: 'PriceAccount1111111111111111111111111111111',
          },
        ];
        const input = intentInput({ ts: 100, signature: 'sig-p', usd_micros: '15000750', usd_prices });
        const valued = await ledger.append(input);
        expect((await ledger.tail(1))[0]?.usd_prices).toEqual(usd_prices);
        expect(hashEntry({ ...valued, usd_prices: [{ ...usd_prices[0]!, price: '1' }] })).not.toBe(valued.hash);
        expect(await ledger.verify()).toEqual({ ok: true, entries: 1 });
      });

      it('counts token spends per mint over the entries as sign does: reservations until a final says otherwise', async () => {
        const { ledger } = s;
        const fig = (change: string, owner = 'M', credit = change.replace('-', '')) => [
          { mint: 'USDC', decimals: 6, change, credits: [{ owner, amount: credit }] },
        ];
        const NOW = 100_000;
        await ledger.append(intentInput({ ts: NOW - 10, signature: 'a', tokens: fig('-100') })); // confirmed
        await ledger.append(signInput({ ts: NOW - 9, signature: 'a', outcome: 'confirmed', tokens: fig('-100') }));
        await ledger.append(intentInput({ ts: NOW - 8, signature: 'b', tokens: fig('-20', 'N') })); // failed: nothing
        await ledger.append(signInput({ ts: NOW - 7, signature: 'b', outcome: 'failed', tokens: [] }));
        await ledger.append(intentInput({ ts: NOW - 6, signature: 'c', tokens: fig('-3') })); // unknown: reserved
        await ledger.append(signInput({ ts: NOW - 5, signature: 'c', outcome: 'unknown' }));
        await ledger.append(intentInput({ ts: NOW - 4, signature: 'd', tokens: fig('-4000') })); // released
        await ledger.append(signInput({ ts: NOW - 3, signature: 'd', outcome: 'signed_expired' }));
        await ledger.append(intentInput({ ts: NOW - 2, signature: 'e', tokens: fig('-50', 'N') })); // still pending
        await ledger.append(intentInput({ ts: NOW - 90_000, signature: 'old', tokens: fig('-7') })); // out of window
        const { tokens: usage } = await ledger.keyUsage('game', NOW);
        expect(usage.get('USDC')?.spent).toBe(153n);
        expect(Object.fromEntries(usage.get('USDC')?.received ?? [])).toEqual({ M: 103n, N: 50n });
      });

      it('names the line when a stored entry was edited behind its back', async () => {
        for (let i = 1; i <= 3; i++) await s.ledger.append(signInput({ ts: i }));
        await s.tamperTs(2, 9);
        expect(await s.ledger.verify()).toEqual({
          ok: false,
          entries: 2,
          line: 2,
          reason: 'broken: line 2: hash does not match its content',
        });
      });

      it('refuses a malformed entry and writes nothing', async () => {
        await expect(s.ledger.append(signInput({ ts: 1.5 }))).rejects.toMatchObject({ code: 'internal' });
        await expect(s.ledger.append(signInput({ balance_change: Number.NaN }))).rejects.toBeInstanceOf(SignerError);
        expect(await s.ledger.verify()).toEqual({ ok: true, entries: 0 });
      });

      it('keeps one valid chain under 200 concurrent appends from two handles', async () => {
        const other = await reopen();
        const writes = Array.from({ length: 200 }, (_, i) =>
          (i % 2 ? other : s.ledger).append(signInput({ ts: i, summary: `n${i}` })),
        );
        const entries = await Promise.all(writes);
        expect(new Set(entries.map((e) => e.hash)).size).toBe(200);
        expect(await s.ledger.verify()).toEqual({ ok: true, entries: 200 });
        const summaries = (await collect(s.ledger.entries())).map((e) => e.summary).sort();
        expect(summaries).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`).sort());
      });

      it('exports to a JSONL file that verifies, and an edit to the file is detected', async () => {
        for (let i = 1; i <= 3; i++) await s.ledger.append(signInput({ ts: i }));
        const dir = mkdtempSync(path.join(tmpdir(), 'ledger-export-'));
        try {
          const file = path.join(dir, 'audit.jsonl');
          expect(await exportJsonl(s.ledger.entries(), file)).toBe(3);
          expect(await verifyJsonlFile(file)).toEqual({ ok: true, entries: 3 });
          writeFileSync(file, readFileSync(file, 'utf8').replace('"ts":1,', '"ts":9,'));
          expect(await verifyJsonlFile(file)).toMatchObject({ ok: false, line: 1 });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });

    describe('head record', () => {
      it('names the last entry, and starts at the genesis hash', async () => {
        expect(await s.ledger.head()).toEqual({ seq: 0, hash: GENESIS_PREV });
        await s.ledger.append(signInput({ ts: 1 }));
        await s.ledger.halt({ key: 'game', reason: 'r', by: 'operator', ts: 2 });
        const last = await s.ledger.append(signInput({ ts: 3 }));
        expect(await s.ledger.head()).toEqual({ seq: 3, hash: last.hash });
      });

      it("verify detects a tail cut off behind the ledger's back", async () => {
        for (let i = 1; i <= 4; i++) await s.ledger.append(signInput({ ts: i }));
        await s.exec('DELETE FROM entries WHERE seq >= 3');
        expect(await s.ledger.verify()).toEqual({
          ok: false,
          entries: 2,
          line: 3,
          reason: matching(
            /^broken: the chain ends after 2 entries, but its head record says 4 ending in [0-9a-f]{64}: entries are missing from the end$/,
          ),
        });
      });

      it('verify detects a deleted last entry even when it was a halt', async () => {
        await s.ledger.append(signInput({ ts: 1 }));
        await s.ledger.halt({ key: 'game', reason: 'stop', by: 'operator', ts: 2 });
        await s.exec("DELETE FROM entries WHERE command = 'halt'");
        await s.exec("DELETE FROM halts WHERE key = 'game'");
        expect(await s.ledger.verify()).toMatchObject({
          ok: false,
          reason: matching(/missing from the end/),
        });
      });

      it('verify detects a deleted halt row: the chain says the key is halted', async () => {
        await s.ledger.append(signInput({ ts: 1 }));
        await s.ledger.halt({ key: 'game', reason: 'stop', by: 'operator', ts: 2 });
        await s.ledger.halt({ key: 'other', reason: 'stop', by: 'operator', ts: 3 });
        await s.ledger.resume('other', 'operator', 4);
        expect(await s.ledger.verify()).toEqual({ ok: true, entries: 4 });
        await s.exec("DELETE FROM halts WHERE key = 'game'");
        expect(await s.ledger.verify()).toEqual({
          ok: false,
          entries: 4,
          line: 2,
          reason: 'broken: line 2 halts key game and no later entry resumes it, but no halt is recorded',
        });
      });

      it('verify detects a halt row added by hand: no entry halts that key', async () => {
        await s.ledger.append(signInput({ ts: 1 }));
        await s.exec("INSERT INTO halts (key, reason, by, ts) VALUES ('game', 'forged', 'operator', 5)");
        expect(await s.ledger.verify()).toMatchObject({
          ok: false,
          reason: 'broken: key game is recorded as halted, but no halt entry in the chain halts it',
        });
      });

      it('an exported file verifies against the head; the same file cut short only fails with --head', async () => {
        for (let i = 1; i <= 3; i++) await s.ledger.append(signInput({ ts: i }));
        const head = await s.ledger.head();
        const dir = mkdtempSync(path.join(tmpdir(), 'ledger-head-'));
        try {
          const file = path.join(dir, 'audit.jsonl');
          await exportJsonl(s.ledger.entries(), file);
          expect(await verifyJsonlFile(file, head)).toEqual({ ok: true, entries: 3 });
          const lines = readFileSync(file, 'utf8').split('\n');
          writeFileSync(file, lines.slice(0, 2).join('\n') + '\n');
          expect(await verifyJsonlFile(file)).toEqual({ ok: true, entries: 2 });
          expect(await verifyJsonlFile(file, head)).toMatchObject({
            ok: false,
            line: 3,
            reason: matching(/entries are missing from the end/),
          });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });

    describe('bounded text', () => {
      it('stores at most MAX_STORED_SUMMARY characters of a summary, halt reason or approval summary, cut with a marker', async () => {
        const huge = 'x'.repeat(200_000);
        const e = await s.ledger.append(signInput({ ts: 1, summary: huge }));
        expect(Array.from(e.summary).length).toBe(MAX_STORED_SUMMARY);
        expect(e.summary).toMatch(/^x+… \[cut: \d+ more characters\]$/);
        expect((await s.ledger.tail(1))[0]).toEqual(e);
        const halt = await s.ledger.halt({ key: 'game', reason: huge, by: 'token:bot', ts: 2 });
        expect(halt.reason.length).toBeLessThanOrEqual(MAX_STORED_SUMMARY);
        expect((await s.ledger.getHalt('game'))!.reason).toBe(halt.reason);
        expect((await s.ledger.tail(1))[0]!.summary).toBe(halt.reason);
        const approval = await s.ledger.createApproval({
          key: 'game',
          summary: huge,
          payload_hash: 'cd'.repeat(32),
          balance_change: null,
          fee: null,
          compute_units: null,
          requested_by: 'token:bot',
          ts: 3,
          expires_at: 100,
        });
        expect(approval.summary.length).toBeLessThanOrEqual(MAX_STORED_SUMMARY);
        expect(await s.ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it('keeps a summary within the bound exactly, and never splits a character made of two code units', async () => {
        const fits = 'é'.repeat(MAX_STORED_SUMMARY);
        expect((await s.ledger.append(signInput({ ts: 1, summary: fits }))).summary).toBe(fits);
        const emoji = (await s.ledger.append(signInput({ ts: 2, summary: '🚀'.repeat(600) }))).summary;
        expect(emoji).toMatch(/^(🚀)+… \[cut: \d+ more characters\]$/u);
        expect(Array.from(emoji).length).toBe(MAX_STORED_SUMMARY);
      });
    });

    describe('halts', () => {
      it('records a halt with its audit entry, keeps the first record, and resume clears it with its entry', async () => {
        const { ledger } = s;
        expect(await ledger.getHalt('game')).toBeNull();
        const first = { key: 'game', reason: 'agent looping', by: 'token:bot', ts: 10 };
        expect(await ledger.halt(first)).toEqual(first);
        expect(await ledger.halt({ key: 'game', reason: 'again', by: 'operator', ts: 11 })).toEqual(first);
        expect(await ledger.getHalt('game')).toEqual(first);
        expect(await ledger.listHalts()).toEqual([first]);

        let log = await ledger.tail(10);
        expect(log).toHaveLength(1);
        expect(log[0]).toMatchObject({
          command: 'halt',
          key: 'game',
          summary: 'agent looping',
          outcome: 'halted',
          detail: 'by token:bot',
          ts: 10,
        });

        expect(await ledger.resume('game', 'operator', 20)).toBe(true);
        expect(await ledger.getHalt('game')).toBeNull();
        expect(await ledger.resume('game', 'operator', 21)).toBe(false);
        log = await ledger.tail(10);
        expect(log).toHaveLength(2);
        expect(log[1]).toMatchObject({
          command: 'resume',
          key: 'game',
          outcome: 'resumed',
          detail: 'by operator',
          ts: 20,
        });
        expect(await ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it('a halt carried over from an archived ledger is recorded as it was, its entry naming the archive', async () => {
        const { ledger } = s;
        const was = { key: 'game', reason: 'agent looping', by: 'token:bot', ts: 10 };
        await ledger.halt({ ...was, carried_from: 'previous-runs/2026-01-01T00-00-00-000Z/ledger.sqlite' });
        expect(await ledger.getHalt('game')).toEqual(was);
        expect((await ledger.tail(1))[0]).toMatchObject({
          command: 'halt',
          key: 'game',
          summary: 'agent looping',
          outcome: 'halted',
          detail:
            'by token:bot; carried over from the archived ledger previous-runs/2026-01-01T00-00-00-000Z/ledger.sqlite',
          ts: 10,
        });
        expect(await ledger.resume('game', 'operator', 20)).toBe(true);
        expect(await ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it('a halt made through one handle is seen by another', async () => {
        const other = await reopen();
        await s.ledger.halt({ key: 'a', reason: 'r', by: 'operator', ts: 1 });
        await s.ledger.halt({ key: 'b', reason: 'r', by: 'operator', ts: 2 });
        expect((await other.listHalts()).map((h) => h.key)).toEqual(['a', 'b']);
        expect(await other.resume('a', 'operator', 3)).toBe(true);
        expect(await s.ledger.getHalt('a')).toBeNull();
      });

      it('concurrent halts of one key from two handles record one halt and one entry', async () => {
        const other = await reopen();
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 ? other : s.ledger).halt({ key: 'k', reason: `r${i}`, by: 'operator', ts: i }),
          ),
        );
        expect(new Set(results.map((r) => r.reason)).size).toBe(1);
        expect((await s.ledger.tail(20)).filter((e) => e.command === 'halt')).toHaveLength(1);
      });
    });

    describe('credential revocations', () => {
      it('records a revocation with its audit entry, keeps the first record, and another handle reads it', async () => {
        const other = await reopen();
        const first = {
          revocation_id: 'ab'.repeat(64),
          name: 'planner',
          reason: 'leaked',
          by: 'operator:alice',
          ts: 10,
        };
        expect(await s.ledger.revokeCredential(first)).toEqual(first);
        // Twice from two handles at once: one row, one entry, the first record kept.
        const again = await Promise.all([
          other.revokeCredential({ ...first, name: null, reason: 'again', ts: 11 }),
          s.ledger.revokeCredential({ ...first, name: null, reason: 'again', ts: 12 }),
        ]);
        expect(again).toEqual([first, first]);
        await s.ledger.revokeCredential({
          revocation_id: 'cd'.repeat(64),
          name: null,
          reason: 'r',
          by: 'operator:bob',
          ts: 20,
        });
        expect((await other.listCredentialRevocations()).map((r) => [r.revocation_id, r.name, r.by])).toEqual([
          ['ab'.repeat(64), 'planner', 'operator:alice'],
          ['cd'.repeat(64), null, 'operator:bob'],
        ]);
        const revokes = (await s.ledger.tail(10)).filter((e) => e.command === 'revoke');
        expect(revokes).toHaveLength(2);
        expect(revokes[0]).toMatchObject({
          key: '*',
          summary: 'leaked',
          outcome: 'revoked',
          detail: `credential block ${'ab'.repeat(64)} (issued root planner) by operator:alice`,
        });
        expect(await s.ledger.verify()).toEqual({ ok: true, entries: 2 });
      });

      it('bounds the reason it stores and its entry repeats', async () => {
        const huge = 'x'.repeat(MAX_STORED_SUMMARY * 3);
        const rec = await s.ledger.revokeCredential({
          revocation_id: 'ef'.repeat(64),
          name: null,
          reason: huge,
          by: 'operator:alice',
          ts: 1,
        });
        expect(rec.reason.length).toBeLessThanOrEqual(MAX_STORED_SUMMARY);
        expect((await s.ledger.listCredentialRevocations())[0]!.reason).toBe(rec.reason);
        expect((await s.ledger.tail(1))[0]!.summary).toBe(rec.reason);
      });
    });

    describe('approvals', () => {
      const request = (over: Partial<Parameters<Ledger['createApproval']>[0]> = {}) => ({
        key: 'wallet',
        summary: 'buy ship',
        payload_hash: 'cd'.repeat(32),
        balance_change: -1_000_000,
        fee: 5_000,
        compute_units: 1_400,
        requested_by: 'token:bot',
        ts: 100,
        expires_at: 220,
        ...over,
      });

      it('creates a pending request with a short typeable id and lists it', async () => {
        const rec = await s.ledger.createApproval(request());
        expect(rec.id).toMatch(/^[0-9a-hjkmnp-tv-z]{8}$/);
        expect(rec).toMatchObject({ ...request(), status: 'pending', decided_by: null, decided_at: null });
        expect(await s.ledger.getApproval(rec.id)).toEqual(rec);
        expect(await s.ledger.getApproval(rec.id.toUpperCase())).toEqual(rec);
        expect(await s.ledger.getApproval('zzzzzzzz')).toBeNull();
        const other = await s.ledger.createApproval(request({ ts: 101 }));
        expect(other.id).not.toBe(rec.id);
        expect((await s.ledger.listApprovals()).map((r) => r.id)).toEqual([rec.id, other.id]);
        expect(await s.ledger.listApprovals({ status: 'approved' })).toEqual([]);
      });

      it("keeps a message sign's text exactly, and null for a transaction's request", async () => {
        const text = 'Sign in\x1b[2J\n\u202e';
        const rec = await s.ledger.createApproval(request({ balance_change: null, fee: null, message: text }));
        expect((await s.ledger.getApproval(rec.id))?.message).toBe(text);
        const described = await s.ledger.createApproval(
          request({ balance_change: null, fee: null, message: text, message_description: 'sign-in text (UTF-8)' }),
        );
        expect((await s.ledger.getApproval(described.id))?.message_description).toBe('sign-in text (UTF-8)');
        const tx = await s.ledger.createApproval(request());
        expect((await s.ledger.getApproval(tx.id))?.message).toBeNull();
        expect((await s.ledger.getApproval(tx.id))?.message_description).toBeNull();
      });

      it('keeps the dollar value an operator is asked to approve, and null for a key that is not priced', async () => {
        const priced = await s.ledger.createApproval(request({ usd_value: '4.000001' }));
        expect((await s.ledger.getApproval(priced.id))?.usd_value).toBe('4.000001');
        const plain = await s.ledger.createApproval(request());
        expect((await s.ledger.getApproval(plain.id))?.usd_value).toBeNull();
      });

      it('an approval decided on one handle is seen by another; a second decision changes nothing', async () => {
        const other = await reopen();
        const rec = await s.ledger.createApproval(request());
        expect((await other.listApprovals({ status: 'pending' })).map((r) => r.id)).toEqual([rec.id]);
        const decided = await other.decideApproval(rec.id, 'approved', 'operator', 150);
        expect(decided).toMatchObject({ status: 'approved', decided_by: 'operator', decided_at: 150 });
        expect(await s.ledger.getApproval(rec.id)).toEqual(decided);
        expect(await s.ledger.decideApproval(rec.id, 'rejected', 'someone', 160)).toEqual(decided);
      });

      it('rejects, and marks a request expired', async () => {
        const a = await s.ledger.createApproval(request());
        const b = await s.ledger.createApproval(request());
        expect(await s.ledger.decideApproval(a.id, 'rejected', 'operator', 120)).toMatchObject({ status: 'rejected' });
        expect(await s.ledger.decideApproval(b.id, 'expired', 'signer', 221)).toMatchObject({
          status: 'expired',
          decided_by: null,
        });
        expect((await s.ledger.listApprovals({ status: 'expired' })).map((r) => r.id)).toEqual([b.id]);
      });

      it('a decision after expires_at does not count: the request becomes expired', async () => {
        const rec = await s.ledger.createApproval(request({ expires_at: 200 }));
        expect(await s.ledger.decideApproval(rec.id, 'approved', 'operator', 200)).toMatchObject({
          status: 'approved',
        });
        const late = await s.ledger.createApproval(request({ expires_at: 200 }));
        expect(await s.ledger.decideApproval(late.id, 'approved', 'operator', 201)).toMatchObject({
          status: 'expired',
          decided_by: null,
          decided_at: 201,
        });
      });

      it('deciding an unknown id is a request error', async () => {
        await expect(s.ledger.decideApproval('nosuchid', 'approved', 'operator', 1)).rejects.toMatchObject({
          code: 'request_invalid',
        });
      });

      describe('by quorum', () => {
        const quorum = (over: Partial<Parameters<Ledger['createApproval']>[0]> = {}) =>
          request({ required: 2, approvers: ['alice', 'bob', 'carol'], ...over });

        it('a request without a quorum takes one vote of anyone, as before', async () => {
          const rec = await s.ledger.createApproval(request());
          expect(rec).toMatchObject({ required: 1, approvers: null, votes: [], waiter: null });
          expect(await s.ledger.decideApproval(rec.id, 'approved', 'operator', 150)).toMatchObject({
            status: 'approved',
            decided_by: 'operator',
            votes: [{ operator: 'operator', decision: 'approved', ts: 150, credential: null }],
          });
        });

        it('2 of 3: the first approval leaves it pending, the same operator again does not count, a second approver approves it', async () => {
          const rec = await s.ledger.createApproval(quorum());
          expect(rec).toMatchObject({ required: 2, approvers: ['alice', 'bob', 'carol'], votes: [] });
          const one = await s.ledger.decideApproval(rec.id, 'approved', 'alice', 110, 'cred-a');
          expect(one).toMatchObject({ status: 'pending', decided_by: null, decided_at: null });
          expect(one.votes).toEqual([{ operator: 'alice', decision: 'approved', ts: 110, credential: 'cred-a' }]);
          const twice = await s.ledger.decideApproval(rec.id, 'approved', 'alice', 111, 'cred-a');
          expect(twice).toEqual(one);
          expect(await s.ledger.getApproval(rec.id)).toEqual(one);
          const two = await s.ledger.decideApproval(rec.id, 'approved', 'bob', 120);
          expect(two).toMatchObject({ status: 'approved', decided_by: 'alice, bob', decided_at: 120 });
          expect(two.votes.map((v) => [v.operator, v.credential])).toEqual([
            ['alice', 'cred-a'],
            ['bob', null],
          ]);
          expect(await s.ledger.getApproval(rec.id)).toEqual(two);
          // Decided: a late vote changes nothing.
          expect(await s.ledger.decideApproval(rec.id, 'rejected', 'carol', 130)).toEqual(two);
        });

        it('one rejection by an approver rejects it at once, even after approvals', async () => {
          const rec = await s.ledger.createApproval(quorum({ required: 3 }));
          await s.ledger.decideApproval(rec.id, 'approved', 'alice', 110);
          await s.ledger.decideApproval(rec.id, 'approved', 'bob', 111);
          const rejected = await s.ledger.decideApproval(rec.id, 'rejected', 'bob', 112);
          expect(rejected).toMatchObject({ status: 'rejected', decided_by: 'bob', decided_at: 112 });
          expect(rejected.votes.map((v) => `${v.operator}:${v.decision}`)).toEqual([
            'alice:approved',
            'bob:approved',
            'bob:rejected',
          ]);
        });

        it("refuses the vote of an operator who is not one of the request's approvers, and records nothing", async () => {
          const rec = await s.ledger.createApproval(quorum());
          const refused = s.ledger.decideApproval(rec.id, 'approved', 'mallory', 110);
          await expect(refused).rejects.toMatchObject({ code: 'request_invalid' });
          await expect(refused).rejects.toThrow(
            `"mallory" is not an approver of approval ${rec.id} (key wallet); its approvers: alice, bob, carol`,
          );
          await expect(s.ledger.decideApproval(rec.id, 'rejected', 'operator', 110)).rejects.toMatchObject({
            code: 'request_invalid',
          });
          expect(await s.ledger.getApproval(rec.id)).toEqual(rec);
        });

        it('refuses a vote whose operator name or credential id is empty or oversized', async () => {
          const rec = await s.ledger.createApproval(quorum({ approvers: null }));
          for (const [by, credential] of [
            ['', null],
            ['x'.repeat(65), null],
            ['alice', ''],
            ['alice', 'c'.repeat(1401)],
          ] as const) {
            await expect(s.ledger.decideApproval(rec.id, 'approved', by, 110, credential)).rejects.toMatchObject({
              code: 'request_invalid',
            });
          }
          expect((await s.ledger.getApproval(rec.id))?.votes).toEqual([]);
        });

        it('a vote after the deadline expires it and is not recorded', async () => {
          const rec = await s.ledger.createApproval(quorum());
          await s.ledger.decideApproval(rec.id, 'approved', 'alice', 200);
          const late = await s.ledger.decideApproval(rec.id, 'approved', 'bob', 221);
          expect(late).toMatchObject({ status: 'expired', decided_by: null, decided_at: 221 });
          expect(late.votes.map((v) => v.operator)).toEqual(['alice']);
        });

        it('two approvers voting at once on two handles: both votes count and it is approved', async () => {
          const other = await reopen();
          for (let round = 0; round < 5; round++) {
            const rec = await s.ledger.createApproval(quorum());
            const [a, b] = await Promise.all([
              s.ledger.decideApproval(rec.id, 'approved', 'alice', 110),
              other.decideApproval(rec.id, 'approved', 'bob', 110),
            ]);
            expect([a.status, b.status].sort()).toEqual(['approved', 'pending']);
            const final = await s.ledger.getApproval(rec.id);
            expect(final?.status).toBe('approved');
            expect(final?.votes.map((v) => v.operator).sort()).toEqual(['alice', 'bob']);
          }
        });
        describe('whose votes count: revoked and removed operators', () => {
          const VOTERS = ['alice', 'bob', 'carol'];
          const counted = (r: ApprovalRecord) => r.votes.map((v) => [v.operator, v.not_counted ?? 'counted']);

          it("a revoked operator's approval does not count: bob approves, is revoked, carol approves, and it is still pending", async () => {
            const rec = await s.ledger.createApproval(quorum());
            await s.ledger.decideApproval(rec.id, 'approved', 'bob', 110, null, VOTERS);
            await s.ledger.revokeOperator('bob', 115);
            const after = await s.ledger.decideApproval(rec.id, 'approved', 'carol', 120, 'cred-c', VOTERS);
            expect(after).toMatchObject({ status: 'pending', decided_by: null, decided_at: null });
            expect(counted(after)).toEqual([
              ['bob', 'revoked'],
              ['carol', 'counted'],
            ]);
            // Another handle (a replica) reads the same record and refuses bob's vote too.
            const other = await reopen();
            expect(await other.getApproval(rec.id)).toEqual(after);
            await expect(other.decideApproval(rec.id, 'approved', 'bob', 121, null, VOTERS)).rejects.toMatchObject({
              code: 'request_invalid',
              message: expect.stringMatching(/operator "bob" is revoked/) as unknown,
            });
            await expect(other.decideApproval(rec.id, 'rejected', 'bob', 121, null, VOTERS)).rejects.toMatchObject({
              code: 'request_invalid',
            });
            const done = await s.ledger.decideApproval(rec.id, 'approved', 'alice', 130, null, VOTERS);
            expect(done).toMatchObject({ status: 'approved', decided_by: 'carol, alice', decided_at: 130 });
          });

          it('a revocation in the same second as a vote voids it; an enrollment reinstates the operator for votes after the revocation only', async () => {
            const rec = await s.ledger.createApproval(quorum({ required: 3 }));
            await s.ledger.decideApproval(rec.id, 'approved', 'bob', 115, null, VOTERS);
            await s.ledger.revokeOperator('bob', 115);
            expect(await s.ledger.operatorStandings()).toEqual([
              { operator: 'bob', revoked_at: 115, reinstated_at: null },
            ]);
            await s.ledger.createEnrollment({
              token_hash: 'be'.repeat(32),
              operator: 'bob',
              created_at: 116,
              expires_at: 400,
            });
            expect(
              await s.ledger.completeEnrollment('be'.repeat(32), 117, {
                credential_id: 'cred-bob-2',
                operator: 'bob',
                public_key: 'pQECAyYgASFYIA',
                counter: 0,
                transports: [],
                created_at: 117,
                last_used_at: null,
              }),
            ).toBe(true);
            expect(await s.ledger.operatorStandings()).toEqual([
              { operator: 'bob', revoked_at: 115, reinstated_at: 117 },
            ]);
            // Reinstated: bob votes again, and that vote counts; the one from before the revocation still does not.
            const again = await s.ledger.decideApproval(rec.id, 'approved', 'bob', 118, null, VOTERS);
            expect(counted(again)).toEqual([
              ['bob', 'revoked'],
              ['bob', 'counted'],
            ]);
            await s.ledger.decideApproval(rec.id, 'approved', 'alice', 119, null, VOTERS);
            const done = await s.ledger.decideApproval(rec.id, 'approved', 'carol', 120, null, VOTERS);
            expect(done).toMatchObject({ status: 'approved', decided_by: 'bob, alice, carol' });
          });

          it('an approver no longer configured: their vote stops counting, and a new one is refused', async () => {
            const rec = await s.ledger.createApproval(quorum());
            await s.ledger.decideApproval(rec.id, 'approved', 'bob', 110, null, VOTERS);
            const withoutBob = ['alice', 'carol'];
            await expect(
              s.ledger.decideApproval(rec.id, 'approved', 'bob', 111, null, withoutBob),
            ).rejects.toMatchObject({
              code: 'request_invalid',
              message: expect.stringMatching(/"bob" is no longer under operators/) as unknown,
            });
            const after = await s.ledger.decideApproval(rec.id, 'approved', 'carol', 120, null, withoutBob);
            expect(after.status).toBe('pending');
            expect(counted(after)).toEqual([
              ['bob', 'not_configured'],
              ['carol', 'counted'],
            ]);
            // Configured again (a later reload): bob's vote counts again, nobody revoked it.
            expect(await s.ledger.decideApproval(rec.id, 'approved', 'alice', 130, null, VOTERS)).toMatchObject({
              status: 'approved',
              decided_by: 'bob, carol, alice',
            });
          });

          it('an approved request judged again as its sign takes it: pending again when an approver was revoked since', async () => {
            const rec = await s.ledger.createApproval(quorum());
            await s.ledger.decideApproval(rec.id, 'approved', 'bob', 110, null, VOTERS);
            const approved = await s.ledger.decideApproval(rec.id, 'approved', 'carol', 111, null, VOTERS);
            expect(approved.status).toBe('approved');
            // Nothing changed: it stays as it is.
            expect(await s.ledger.recountApproval(rec.id, VOTERS, 112)).toEqual(approved);
            await s.ledger.revokeOperator('bob', 113);
            const reopened = await (await reopen()).recountApproval(rec.id, VOTERS, 114);
            expect(reopened).toMatchObject({ status: 'pending', decided_by: null, decided_at: null });
            expect(counted(reopened)).toEqual([
              ['bob', 'revoked'],
              ['carol', 'counted'],
            ]);
            expect(await s.ledger.getApproval(rec.id)).toEqual(reopened);
            const done = await s.ledger.decideApproval(rec.id, 'approved', 'alice', 115, null, VOTERS);
            expect(done).toMatchObject({ status: 'approved', decided_by: 'carol, alice' });
            // Removed from the config: alice's approval no longer counts either; past the deadline it is expired.
            expect(await s.ledger.recountApproval(rec.id, ['bob', 'carol'], 221)).toMatchObject({
              status: 'expired',
              decided_by: null,
              decided_at: 221,
            });
          });
        });
      });

      describe('a sign asking again for the same payload', () => {
        const ask = (ledger: Ledger, waiter: string, over: Partial<Parameters<Ledger['createApproval']>[0]> = {}) =>
          ledger.requestApproval({ ...request({ required: 2, approvers: ['alice', 'bob'], ...over }), waiter });

        it('gets the pending request for the same key and payload, which it now waits on; another payload or key gets its own', async () => {
          const first = await ask(s.ledger, 'w1');
          expect(first.joined).toBe(false);
          expect(first.record).toMatchObject({ status: 'pending', waiter: 'w1', required: 2 });
          await s.ledger.decideApproval(first.record.id, 'approved', 'alice', 105);
          const again = await ask(s.ledger, 'w2', { ts: 110 });
          expect(again.joined).toBe(true);
          expect(again.record).toMatchObject({ id: first.record.id, waiter: 'w2', ts: 100 });
          expect(again.record.votes.map((v) => v.operator)).toEqual(['alice']); // the votes cast still count
          expect((await s.ledger.getApproval(first.record.id))?.waiter).toBe('w2');
          expect((await ask(s.ledger, 'w3', { payload_hash: 'ef'.repeat(32) })).record.id).not.toBe(first.record.id);
          expect((await ask(s.ledger, 'w4', { key: 'other' })).record.id).not.toBe(first.record.id);
        });

        it('gets a new request once the last one was decided, or is past its deadline', async () => {
          const first = await ask(s.ledger, 'w1');
          await s.ledger.decideApproval(first.record.id, 'rejected', 'bob', 105);
          const second = await ask(s.ledger, 'w2', { ts: 110 });
          expect(second.joined).toBe(false);
          expect(second.record.id).not.toBe(first.record.id);
          const third = await ask(s.ledger, 'w3', { ts: 221, expires_at: 341 }); // the second expired at 220
          expect(third.joined).toBe(false);
          expect(third.record.id).not.toBe(second.record.id);
        });

        it('the sign it waits for going away abandons it; a sign it no longer waits for leaves it pending', async () => {
          const first = await ask(s.ledger, 'w1');
          await ask(s.ledger, 'w2', { ts: 110 });
          expect(await s.ledger.leaveApproval(first.record.id, 'w1', 111)).toMatchObject({
            status: 'pending',
            waiter: 'w2',
          });
          expect(await s.ledger.leaveApproval(first.record.id, 'w2', 112)).toMatchObject({
            status: 'abandoned',
            decided_by: 'signer',
            decided_at: 112,
          });
          await expect(s.ledger.decideApproval(first.record.id, 'approved', 'alice', 113)).resolves.toMatchObject({
            status: 'abandoned',
          });
        });

        it('a sign of the same payload asking again before the deadline reopens an abandoned request, its votes kept', async () => {
          const first = await ask(s.ledger, 'w1');
          await s.ledger.decideApproval(first.record.id, 'approved', 'alice', 105);
          await s.ledger.leaveApproval(first.record.id, 'w1', 106);
          const again = await ask(s.ledger, 'w2', { ts: 150 });
          expect(again.joined).toBe(true);
          expect(again.record).toMatchObject({
            id: first.record.id,
            status: 'pending',
            decided_by: null,
            decided_at: null,
            waiter: 'w2',
          });
          expect(await s.ledger.getApproval(first.record.id)).toEqual(again.record);
          const approved = await s.ledger.decideApproval(first.record.id, 'approved', 'bob', 151);
          expect(approved).toMatchObject({ status: 'approved', decided_by: 'alice, bob' });
          // Past its deadline an abandoned request stays closed: the same payload opens a new one.
          const other = await ask(s.ledger, 'w3', { payload_hash: 'ef'.repeat(32) });
          await s.ledger.leaveApproval(other.record.id, 'w3', 107);
          const late = await ask(s.ledger, 'w4', { payload_hash: 'ef'.repeat(32), ts: 221, expires_at: 341 });
          expect(late.joined).toBe(false);
          expect(late.record.id).not.toBe(other.record.id);
        });

        it('two handles asking at once for one payload open one request between them', async () => {
          const other = await reopen();
          for (let round = 0; round < 5; round++) {
            const hash = `${round}`.repeat(64);
            const [a, b] = await Promise.all([
              ask(s.ledger, `a${round}`, { payload_hash: hash }),
              ask(other, `b${round}`, { payload_hash: hash }),
            ]);
            expect(a.record.id).toBe(b.record.id);
            expect([a.joined, b.joined].sort()).toEqual([false, true]);
          }
          expect(await s.ledger.listApprovals()).toHaveLength(5);
        });
      });
    });

    describe('operator console records', () => {
      const passkey = (over: Partial<PasskeyRecord> = {}): PasskeyRecord => ({
        credential_id: 'cred-a',
        operator: 'alice',
        public_key: 'pQECAyYgASFYIA',
        counter: 0,
        transports: ['internal', 'hybrid'],
        created_at: 100,
        last_used_at: null,
        ...over,
      });
      const link = (over: Partial<EnrollmentRecord> = {}) => ({
        token_hash: 'ab'.repeat(32),
        operator: 'alice',
        created_at: 100,
        expires_at: 400,
        ...over,
      });

      it('an enrollment link registers one passkey once, and never after it expired', async () => {
        await s.ledger.createEnrollment(link());
        expect(await s.ledger.getEnrollment('ab'.repeat(32))).toEqual({ ...link(), used_at: null });
        expect(await s.ledger.completeEnrollment('ab'.repeat(32), 200, passkey())).toBe(true);
        expect(await s.ledger.getEnrollment('ab'.repeat(32))).toMatchObject({ used_at: 200 });
        expect(await s.ledger.completeEnrollment('ab'.repeat(32), 201, passkey({ credential_id: 'cred-b' }))).toBe(
          false,
        );
        await s.ledger.createEnrollment(link({ token_hash: 'cd'.repeat(32) }));
        expect(await s.ledger.completeEnrollment('cd'.repeat(32), 401, passkey({ credential_id: 'cred-c' }))).toBe(
          false,
        );
        expect(await s.ledger.completeEnrollment('ef'.repeat(32), 200, passkey({ credential_id: 'cred-d' }))).toBe(
          false,
        );
        expect((await s.ledger.listPasskeys()).map((p) => p.credential_id)).toEqual(['cred-a']);
      });

      it('two handles racing for one link: exactly one passkey is stored', async () => {
        const other = await reopen();
        await s.ledger.createEnrollment(link());
        const results = await Promise.all([
          s.ledger.completeEnrollment('ab'.repeat(32), 200, passkey({ credential_id: 'one' })),
          other.completeEnrollment('ab'.repeat(32), 200, passkey({ credential_id: 'two' })),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await other.listPasskeys()).toHaveLength(1);
      });

      it('keeps passkeys exactly, per operator, records their use, and revoking removes them and open links', async () => {
        for (const [i, p] of [
          passkey(),
          passkey({ credential_id: 'cred-b', operator: 'bob', created_at: 90 }),
        ].entries()) {
          const token_hash = String(i).repeat(64);
          await s.ledger.createEnrollment(link({ token_hash, operator: p.operator }));
          await s.ledger.completeEnrollment(token_hash, 150, p);
        }
        await s.ledger.createEnrollment(link({ token_hash: 'ff'.repeat(32) }));
        expect(await s.ledger.getPasskey('cred-a')).toEqual(passkey());
        expect((await s.ledger.listPasskeys()).map((p) => p.operator)).toEqual(['alice', 'bob']);
        expect((await s.ledger.listPasskeys('bob')).map((p) => p.credential_id)).toEqual(['cred-b']);
        await s.ledger.touchPasskey('cred-a', 7, 300);
        expect(await (await reopen()).getPasskey('cred-a')).toMatchObject({ counter: 7, last_used_at: 300 });
        expect(await s.ledger.revokeOperator('alice', 310)).toEqual({ passkeys: 1, sessions: 0 });
        expect(await s.ledger.getPasskey('cred-a')).toBeNull();
        expect(await s.ledger.getEnrollment('ff'.repeat(32))).toBeNull();
        expect(await s.ledger.revokeOperator('alice', 320)).toEqual({ passkeys: 0, sessions: 0 });
        expect(await s.ledger.operatorStandings()).toEqual([
          { operator: 'alice', revoked_at: 320, reinstated_at: null },
        ]);
        expect((await s.ledger.listPasskeys()).map((p) => p.credential_id)).toEqual(['cred-b']);
      });

      it('a console login lives until it is ended (logout), its operator revoked, or it expires, on every handle', async () => {
        const session = (over: Partial<SessionRecord> = {}): SessionRecord => ({
          id_hash: '01'.repeat(32),
          operator: 'alice',
          credential: 'cred-a',
          created_at: 100,
          expires_at: 1000,
          ...over,
        });
        const other = await reopen();
        await s.ledger.openSession(session(), 100);
        await s.ledger.openSession(session({ id_hash: '02'.repeat(32) }), 100);
        await s.ledger.openSession(session({ id_hash: '03'.repeat(32), operator: 'bob' }), 100);
        await s.ledger.openSession(session({ id_hash: '04'.repeat(32), expires_at: 200 }), 100);
        expect(await other.getSession('01'.repeat(32), 500)).toEqual(session());
        expect(await other.getSession('04'.repeat(32), 201)).toBeNull();
        // Logging out in one browser ends that login only.
        await s.ledger.endSession('01'.repeat(32));
        await s.ledger.endSession('01'.repeat(32));
        expect(await other.getSession('01'.repeat(32), 500)).toBeNull();
        expect(await other.getSession('02'.repeat(32), 500)).not.toBeNull();
        // Revoking ends all of the operator's, and only theirs.
        expect(await other.revokeOperator('alice', 510)).toEqual({ passkeys: 0, sessions: 2 });
        expect(await s.ledger.getSession('02'.repeat(32), 500)).toBeNull();
        expect(await s.ledger.getSession('03'.repeat(32), 500)).not.toBeNull();
        expect(await s.ledger.endSessionsOf('bob')).toBe(1);
        expect(await s.ledger.getSession('03'.repeat(32), 500)).toBeNull();
      });

      it('a nonce is taken once, only for its purpose, and not after it expired', async () => {
        const other = await reopen();
        await s.ledger.putNonce(
          { nonce: 'n1', purpose: 'decide', subject: 'abc:approved:alice', expires_at: 200 },
          100,
        );
        await s.ledger.putNonce({ nonce: 'n2', purpose: 'login', subject: '', expires_at: 200 }, 100);
        expect(await s.ledger.takeNonce('n1', 'login', 150)).toBeNull();
        const taken = await Promise.all([
          s.ledger.takeNonce('n1', 'decide', 150),
          other.takeNonce('n1', 'decide', 150),
        ]);
        expect(taken.filter((t) => t !== null)).toEqual([
          { nonce: 'n1', purpose: 'decide', subject: 'abc:approved:alice', expires_at: 200 },
        ]);
        expect(await s.ledger.takeNonce('n2', 'login', 201)).toBeNull();
      });

      it('a setting keeps the first value any handle stored', async () => {
        const other = await reopen();
        expect(await s.ledger.settingOrInit('session_secret', 'first')).toBe('first');
        expect(await other.settingOrInit('session_secret', 'second')).toBe('first');
      });

      it('stores what an approval shows beyond amounts: programs, lamport credits and the fee payer', async () => {
        const rec = await s.ledger.createApproval({
          key: 'wallet',
          summary: 's',
          payload_hash: 'cd'.repeat(32),
          balance_change: -5,
          fee: 5,
          compute_units: 1,
          requested_by: 'token:bot',
          ts: 1,
          expires_at: 2,
          programs: ['11111111111111111111111111111111'],
          destinations: [{ address: 'Dest1111111111111111111111111111', lamports: 5 }],
          fee_payer: 'Payer111111111111111111111111111',
        });
        expect(await s.ledger.getApproval(rec.id)).toMatchObject({
          programs: ['11111111111111111111111111111111'],
          destinations: [{ address: 'Dest1111111111111111111111111111', lamports: 5 }],
          fee_payer: 'Payer111111111111111111111111111',
        });
      });
    });

    describe('per-key lock', () => {
      it('a second lock on the same key waits; another key does not; release unblocks the waiter', async () => {
        const first = await s.ledger.lockKey('a');
        const second = s.ledger.lockKey('a');
        expect(await stateAfter(second, 300)).toBe('pending');
        const b = await s.ledger.lockKey('b');
        await b.release();
        await first.release();
        const got = await second;
        await got.release();
      });

      it('excludes across two handles on the same store (as across processes or replicas)', async () => {
        const other = await reopen();
        const held = await s.ledger.lockKey('a');
        const waiting = other.lockKey('a');
        expect(await stateAfter(waiting, 300)).toBe('pending');
        const otherKey = await other.lockKey('b');
        await otherKey.release();
        await held.release();
        await (await waiting).release();
      });

      it('serves waiters one at a time: no two holders of one key at once', async () => {
        const other = await reopen();
        let inside = 0;
        let maxInside = 0;
        await Promise.all(
          Array.from({ length: 12 }, async (_, i) => {
            const lock = await (i % 2 ? other : s.ledger).lockKey('k');
            inside += 1;
            maxInside = Math.max(maxInside, inside);
            await new Promise((r) => setTimeout(r, 5));
            inside -= 1;
            await lock.release();
          }),
        );
        expect(maxInside).toBe(1);
      });

      it('a waiter that aborts rejects with cancelled and leaves the lock usable', async () => {
        const other = await reopen();
        const held = await s.ledger.lockKey('a');
        const local = new AbortController();
        const remote = new AbortController();
        const localWait = s.ledger.lockKey('a', local.signal);
        const remoteWait = other.lockKey('a', remote.signal);
        expect(await stateAfter(localWait, 100)).toBe('pending');
        local.abort();
        remote.abort();
        await expect(localWait).rejects.toMatchObject({ code: 'cancelled' });
        await expect(remoteWait).rejects.toMatchObject({ code: 'cancelled' });
        await held.release();
        const again = await other.lockKey('a');
        await again.release();
        const pre = new AbortController();
        pre.abort();
        await expect(s.ledger.lockKey('a', pre.signal)).rejects.toMatchObject({ code: 'cancelled' });
      });

      it('releasing twice is harmless', async () => {
        const lock = await s.ledger.lockKey('a');
        await lock.release();
        await lock.release();
        const next = await s.ledger.lockKey('a');
        await next.release();
      });
    });

    outboxContract({ ledger: () => s.ledger, reopen });
    treasuryBaselinesContract({ ledger: () => s.ledger, reopen });

    describe('lifecycle', () => {
      it('answers ping, and after close every operation fails with a ledger error', async () => {
        await s.ledger.ping();
        const other = await s.reopen();
        await other.close();
        await other.close();
        await expect(other.append(signInput())).rejects.toMatchObject({ code: 'ledger' });
        await expect(other.ping()).rejects.toMatchObject({ code: 'ledger' });
      });
    });
  });
}
