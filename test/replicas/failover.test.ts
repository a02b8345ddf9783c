/**
 * The ledger's PostgreSQL primary killed under load (docs/ledger.md, "Failover"): a primary and a standby of the
 * test's own (bench/pg-pair.ts), two signer replicas given both in one multi-host URL, signs in flight on four keys
 * near their caps on the embedded chain at 400 ms blocks. The test stands in for the orchestrator
 * (`orchestratorStandIn`: kill -9 of the primary, promotion of the standby).
 *
 * Synchronous standby: every sign an agent saw confirmed is in the new primary's ledger, no key spent past its cap,
 * the hash chain verifies, and the former primary, started again as it was (writable, on the timeline the promotion
 * left behind), receives no write: the replicas' timeline fence keeps them off it even when it is the only writable
 * server left. Every intent ends with its final entry once a restarted replica's watcher ran: when the kill left
 * one open, the run waits for it to be an orphan (about 80 s more).
 *
 * Asynchronous standby: the loss is made to happen, not hoped for. The load pauses, and once the standby has
 * everything written so far the link it streams through stops carrying the primary's bytes (PgPair.holdReplication,
 * standing in for a partition or a stalled standby); the load goes on without one key (IDLE_KEY) until 8 more signs
 * are confirmed; then the same failover. What docs/ledger.md says follows: the signs confirmed while replication
 * was held are gone from the ledger (intent and final entry), those confirmed before it are all there, the hash
 * chain verifies over what survived, each key that lost a reservation is halted by the failover check, whose log
 * names every lost sign and nothing the ledger kept, no key spends past its cap by more than the signs whose
 * reservation may be gone, and the idle key signs on both replicas after the promotion.
 *
 * Needs the PostgreSQL server binaries (initdb, pg_basebackup: CI installs them with the server); skipped, and
 * says so, without them.
 */
import { LAMPORTS_PER_SIGNATURE } from '../../src/localnet/fees';
import { orphanAfterMs } from '../../src/signer/flow/intent-watch';
import { McpHttpClient, type ReportView, type ToolReply } from './mcp-http';
import { ReplicaCluster, closeCluster, waitFor } from './cluster';
import { PgPair, admin, pgPairAvailable, type PgServerHandle } from '../../bench/pg-pair';

const AMOUNT = 1_000_000;
/** Each sign moves AMOUNT plus a count below 1000, so no two transactions are the same (same blockhash). */
const SIGN_COST = AMOUNT + 1_000 + LAMPORTS_PER_SIGNATURE;
/** Room for 24 signs per key: with 8 workers a key, its cap is reached about three rounds in, after the kill. */
const CAP = 24 * SIGN_COST;
const KEYS = ['k0', 'k1', 'k2', 'k3'];
const WORKERS_PER_KEY_AND_REPLICA = 4; // 2 replicas x 4 keys x 4 = 32 signs in flight
const FAILOVER_MS = 5_000;
/** Shorter than the default so an intent the kill left without its final entry is an orphan sooner (orphanAfterMs). */
const CONFIRM_DEADLINE_MS = 10_000;

interface Run {
  replica: number;
  key: string;
  started: number;
  ended: number;
  report: ReportView | null;
  code: string | null;
}

/** What the orchestrator (Patroni, CloudNativePG, a managed service) does on a failover, done by the test. */
const orchestratorStandIn = {
  async failover(pair: PgPair): Promise<void> {
    await pair.kill(pair.primary);
    await pair.promote(pair.standby);
  },
};

/** Asynchronous: the key left idle while replication is held (it loses nothing, so it is never halted). */
const IDLE_KEY = 'k3';
/** Signs confirmed while asynchronous replication is held, before the kill. */
const CONFIRMED_WHILE_HELD = 8;

const maybe = pgPairAvailable() ? describe : describe.skip;
if (!pgPairAvailable()) console.warn('failover.test.ts skipped: no PostgreSQL server binaries (initdb, pg_basebackup)');

maybe.each([
  { mode: 'synchronous', synchronous: true },
  { mode: 'asynchronous', synchronous: false },
])('PostgreSQL primary killed under load ($mode standby)', ({ mode, synchronous }) => {
  let pair: PgPair;
  let cluster: ReplicaCluster | undefined;
  let primaryNow: PgServerHandle;

  beforeAll(async () => {
    pair = await PgPair.start({ synchronous, link: !synchronous });
    primaryNow = pair.primary;
    cluster = await ReplicaCluster.start({
      keys: Object.fromEntries(KEYS.map((k) => [k, { daily_lamport_cap: CAP }])),
      blockIntervalMs: 400,
      timings: { ledger_failover_ms: FAILOVER_MS, confirm_deadline_ms: CONFIRM_DEADLINE_MS },
      ledger: { url: pair.multiHostUrl, readUrl: () => primaryNow.url },
    });
  }, 120_000);
  afterAll(async () => {
    await closeCluster(cluster);
    pair.close();
  }, 30_000);

  const c = () => cluster!;
  const readyDetail = async (i: number) => {
    const res = await fetch(`${c().replicas[i]!.url}/ready`, { headers: { authorization: `Bearer ${c().token}` } });
    return { status: res.status, body: (await res.json()) as { detail?: Record<string, string> } };
  };
  const codeOf = (reply: ToolReply) => (reply.structured as { error?: { code?: string } } | null)?.error?.code ?? null;

  it('kill -9 of the primary mid-load, the standby promoted: signs continue; synchronous: nothing confirmed is lost, no cap is passed, every intent ends, the former primary gets no write; asynchronous: exactly the signs confirmed while replication was held are lost and their keys are halted by the failover check; the chain verifies', async () => {
    // Asynchronous: /ready warns from the start that a failover can lose acknowledged writes.
    for (const i of [0, 1]) {
      const warning = (await readyDetail(i)).body.detail?.ledger_warning;
      if (synchronous) expect(warning).toBeUndefined();
      else expect(warning).toMatch(/no synchronous standby/);
    }
    const payersBefore = Object.fromEntries(
      await Promise.all(KEYS.map(async (k) => [k, await c().balance(c().keys[k]!.pubkey)] as const)),
    );

    const runs: Run[] = [];
    let stop = false;
    let unique = 0;
    // Asynchronous: the load pauses while replication is held (no key nears its cap on a slow machine meanwhile,
    // and no sign is in flight across the hold), then goes on without IDLE_KEY until the promotion, so none of
    // its reservations can be lost and it keeps signing after the failover while the check halts the keys that
    // lost some.
    const inFlight = new Map(KEYS.map((k) => [k, 0]));
    let paused: { keys: ReadonlySet<string>; until: Promise<void>; resume: () => void } | null = null;
    const pause = (keys: readonly string[]) => {
      let resume = () => {};
      const until = new Promise<void>((r) => (resume = r));
      const before = paused;
      paused = { keys: new Set(keys), until, resume };
      before?.resume();
    };
    const workers = [0, 1].flatMap((replica) =>
      KEYS.flatMap((key) =>
        Array.from({ length: WORKERS_PER_KEY_AND_REPLICA }, async (_, w) => {
          for (let i = 0; !stop; i++) {
            while (paused?.keys.has(key)) await paused.until;
            inFlight.set(key, inFlight.get(key)! + 1);
            const run: Run = { replica, key, started: Date.now(), ended: 0, report: null, code: null };
            const reply = await c()
              .replicas[replica]!.mcp.sign(
                key,
                c().transfer(key, AMOUNT + (unique++ % 1_000), `${key} ${replica}/${w}/${i}`),
              )
              .catch(() => null);
            run.ended = Date.now();
            inFlight.set(key, inFlight.get(key)! - 1);
            if (reply) {
              run.code = codeOf(reply);
              if (run.code === null) run.report = McpHttpClient.report(reply);
            }
            runs.push(run);
          }
        }),
      ),
    );
    const confirmed = (from: number, replica?: number) =>
      runs.filter(
        (r) =>
          r.started >= from && r.report?.outcome === 'confirmed' && (replica === undefined || r.replica === replica),
      );

    let killAt = 0;
    let promotedAt = 0;
    let hold = { caughtUpAt: 0, heldAt: 0 };
    try {
      await waitFor(() => confirmed(0).length >= 8, 30_000, '8 confirmed signs before the kill');
      if (!synchronous) {
        pause(KEYS);
        await waitFor(() => KEYS.every((k) => inFlight.get(k) === 0), 30_000, 'no sign in flight');
        hold = await pair.holdReplication();
        pause([IDLE_KEY]);
        await waitFor(
          () => confirmed(hold.heldAt).length >= CONFIRMED_WHILE_HELD,
          60_000,
          `${CONFIRMED_WHILE_HELD} signs confirmed while replication is held`,
        );
      }
      killAt = Date.now();
      await orchestratorStandIn.failover(pair);
      primaryNow = pair.standby;
      promotedAt = Date.now();
      pause([]);
      await waitFor(
        () =>
          confirmed(promotedAt, 0).length >= 1 &&
          confirmed(promotedAt, 1).length >= 1 &&
          KEYS.every((k) =>
            runs.some(
              (r) =>
                r.key === k &&
                r.started >= promotedAt &&
                (r.report?.failed_check === 'limits' || r.report?.failed_check === 'halted'),
            ),
          ),
        60_000,
        'signs confirmed on both replicas after the promotion, and every key at its cap or halted',
      );
    } catch (e) {
      const since = (from: number) => outcomes(runs.filter((r) => r.started >= from));
      console.log(`outcomes: all ${outcomes(runs)}; since the hold ${since(hold.heldAt || Date.now())}`);
      for (const r of c().replicas) console.log(`replica ${r.index} stderr (tail):\n${r.stderr()}`);
      throw e;
    } finally {
      stop = true;
      pause([]);
      await Promise.all(workers);
    }
    const firstAfter = Math.min(...confirmed(killAt).map((r) => r.ended));

    // Every sign an agent saw confirmed has its reservation (intent) in the new primary's ledger, and those
    // finished before the kill their final entry too.
    const entries = await c().entries();
    const intents = new Set(entries.filter((e) => e.command === 'sign-intent').map((e) => e.signature));
    const signed = new Set(entries.filter((e) => e.command === 'sign').map((e) => e.signature));
    const all = confirmed(0);
    const lost = all.filter((r) => !intents.has(r.report!.signature));
    const lostFinal = all.filter((r) => r.ended < killAt && !signed.has(r.report!.signature));
    const sig = (r: Run) => r.report!.signature!;
    // Confirmed once the promoted standby took writes: there, whatever the mode.
    expect(all.filter((r) => r.started >= promotedAt && !intents.has(sig(r)))).toEqual([]);
    // Confirmed while replication was held (asynchronous only): their commits never left the primary. A run the wait
    // above counted can have ended in the very millisecond the kill's time was taken: at or before it.
    const heldRuns = synchronous ? [] : all.filter((r) => r.started >= hold.heldAt && r.ended <= killAt);
    if (synchronous) {
      expect(lost).toEqual([]);
      expect(lostFinal).toEqual([]);
    } else {
      // Everything acknowledged while the standby kept up survived; everything acknowledged after the hold is gone.
      expect(all.filter((r) => r.ended < hold.caughtUpAt && !(intents.has(sig(r)) && signed.has(sig(r))))).toEqual([]);
      expect(heldRuns.length).toBeGreaterThanOrEqual(CONFIRMED_WHILE_HELD);
      expect(heldRuns.filter((r) => intents.has(sig(r)) || signed.has(sig(r)))).toEqual([]);
    }

    // Synchronous: no key spent past its cap, on the chain or in the ledger (which charges at least what left the
    // account), and the failover check halts none. Asynchronous: a key whose reservations were lost would go on
    // signing against a usage that lacks them; the failover check finds its landed transactions that the ledger
    // does not name and halts it (its reason names them, each one a sign of this run whose intent is gone). What
    // it spent past its cap before that is at most what the signs whose reservation may be gone moved: any sign
    // that ended after the standby last caught up and started before the promotion, sent (a signature) or unknown
    // (an error and no report), whose intent is not there.
    const overCap: string[] = [];
    const halted: string[] = [];
    const signatureOf = new Map(runs.filter((r) => r.report?.signature).map((r) => [r.report!.signature!, r]));
    for (const k of KEYS) {
      const spent = payersBefore[k]! - (await c().balance(c().keys[k]!.pubkey));
      const [view] = (await c().replicas[0]!.mcp.tool('key_show', { key: k })).structured!.keys as {
        spent_or_reserved_24h: number;
        halted: { reason: string; by: string } | null;
      }[];
      if (spent > CAP || view!.spent_or_reserved_24h > CAP)
        overCap.push(`${k}: spent ${spent} (${((spent - CAP) / SIGN_COST).toFixed(1)} signs past the cap)`);
      if (view!.halted) halted.push(`${k}: ${view!.halted.by}`);
      if (synchronous) {
        expect(view!.halted).toBeNull();
        continue;
      }
      const mayBeGone = runs.filter(
        (r) =>
          r.key === k &&
          r.ended >= hold.caughtUpAt &&
          r.started < promotedAt &&
          (r.report === null || (r.report.signature !== null && !intents.has(r.report.signature))),
      ).length;
      if (spent > CAP + mayBeGone * SIGN_COST) {
        const mine = runs.filter((r) => r.key === k);
        const keyEntries = entries.filter((e) => e.key === k);
        console.log(
          `${k} over: spent ${spent}, usage ${view!.spent_or_reserved_24h}, mayBeGone ${mayBeGone}, halted ${view!.halted?.by}\n` +
            `runs ${mine.length}: ${outcomes(mine)}; confirmed ${mine.filter((r) => r.report?.outcome === 'confirmed').length}\n` +
            `intents ${keyEntries.filter((e) => e.command === 'sign-intent').length}, finals ${keyEntries.filter((e) => e.command === 'sign').length}: ${keyEntries.map((e) => `${e.command}/${e.outcome}/${e.balance_change}`).join(' ')}\n` +
            `times: caughtUp ${hold.caughtUpAt} held ${hold.heldAt} kill ${killAt} promoted ${promotedAt}\n` +
            mine
              .map(
                (r) =>
                  `${r.started}-${r.ended} ${r.replica} ${r.report?.outcome ?? r.code}/${r.report?.failed_check} ${r.report?.signature?.slice(0, 8)} intent=${r.report?.signature ? intents.has(r.report.signature) : '-'}`,
              )
              .join('\n'),
        );
        for (const r of c().replicas)
          console.log(
            `replica ${r.index}:\n${r
              .stderr()
              .split('\n')
              .filter((l) => !l.includes('/ready'))
              .join('\n')}`,
          );
      }
      expect(spent).toBeLessThanOrEqual(CAP + mayBeGone * SIGN_COST);
      const lostOfKey = heldRuns.filter((r) => r.key === k).map(sig);
      if (lostOfKey.length > 0) {
        expect(view!.halted?.by).toBe('signer (failover check)');
        expect(view!.halted?.reason).toMatch(/^failover check: \d+ landed transaction\(s\) of this key/);
        // The reason counts them; each replica's log names them all.
        const named = [...new Set(c().replicas.flatMap((r) => failoverCheckLog(r.stderr(), k)))];
        // every confirmed sign lost before the kill is named (they had all landed when the check ran) ...
        expect(lostOfKey.filter((s) => !named.includes(s))).toEqual([]);
        // ... and no sign whose intent the ledger kept, nor any of another key. A named one may have a final entry:
        // a sign whose intent was lost and that confirmed after the promotion writes its final there, later than
        // the check. A signature the test never saw is a sign whose agent got an error and no report, sent all the
        // same (each counted in mayBeGone).
        const wrong = named.filter((s) => intents.has(s) || (signatureOf.get(s)?.key ?? k) !== k);
        expect(wrong.map((s) => `${s}: intent ${intents.has(s)}, key ${signatureOf.get(s)?.key}`)).toEqual([]);
        expect(named.length).toBeLessThanOrEqual(mayBeGone);
      } else if (view!.halted) expect(view!.halted.by).toBe('signer (failover check)');
    }
    if (synchronous) expect(overCap).toEqual([]);

    const verify = await c().cli(['audit', 'verify']);
    expect(verify.stdout.trim()).toMatch(/^ok: \d+ entries$/);

    // The promoted standby has no synchronous standby of its own: /ready says what a further failover could lose.
    for (const i of [0, 1])
      await waitFor(
        async () => /no synchronous standby/.test((await readyDetail(i)).body.detail?.ledger_warning ?? ''),
        10_000,
        `the replication warning on replica ${i + 1}`,
        200,
      );

    console.log(
      [
        `failover (${mode} standby): kill -9 of the primary, standby promoted by the test`,
        `signs answered            ${runs.length}`,
        `confirmed before the kill ${confirmed(0).filter((r) => r.ended < killAt).length}`,
        `confirmed after the kill  ${confirmed(killAt).length} (replica 1: ${confirmed(killAt, 0).length}, replica 2: ${confirmed(killAt, 1).length})`,
        `outcomes                  ${outcomes(runs)}`,
        `errors (no report)        ${runs.filter((r) => r.report === null).length} (${[...new Set(runs.map((r) => r.code).filter((x) => x !== null))].join(', ')})`,
        ...(synchronous
          ? []
          : [
              `replication held          ${killAt - hold.heldAt} ms before the kill, ${heldRuns.length} signs confirmed meanwhile`,
            ]),
        `kill to promotion         ${promotedAt - killAt} ms`,
        `signing stopped           ${firstAfter - killAt} ms (kill to the first confirmed sign started after it)`,
        `confirmed lost            ${lost.length} intents, ${lostFinal.length} final entries`,
        `keys over their cap       ${overCap.length === 0 ? 'none' : overCap.join('; ')}`,
        `keys halted               ${halted.length === 0 ? 'none' : halted.join('; ')}`,
      ].join('\n'),
    );

    if (!synchronous) return; // the fence and the orphans do not depend on the replication mode: checked once

    // No intent is left unreconciled once the watcher ran. An intent the kill left without its final entry (its
    // sign failed after the intent was written, or the final's commit was lost with the primary) is an orphan: a
    // starting engine's watcher picks it up and ends it once it is older than any sign could still be running
    // (orphanAfterMs), from the chain's answer. Replica 1 is restarted so its watcher runs; the ledger is polled
    // until every intent has its final entry, with a deadline past the newest orphan's due time.
    const unfinished = (es: typeof entries) => {
      const finals = new Set(es.filter((e) => e.command === 'sign' && e.signature !== null).map((e) => e.signature));
      return es.filter((e) => e.command === 'sign-intent' && !finals.has(e.signature));
    };
    const orphans = unfinished(await c().entries());
    await c().kill(0);
    await c().spawnReplica(0);
    const due = Math.max(
      Date.now(),
      ...orphans.map((e) => e.ts * 1000 + orphanAfterMs({ confirm_deadline_ms: CONFIRM_DEADLINE_MS })),
    );
    await waitFor(
      async () => unfinished(await c().entries()).length === 0,
      due - Date.now() + 60_000,
      `a final entry for every intent (${orphans.length} without one after the load)`,
      500,
    );
    console.log(`intents without a final entry after the load: ${orphans.length}, all ended by the restarted watcher`);

    // The former primary started again as it was: writable, on timeline 1. With the promoted server killed too,
    // it is the only writable server, and still no replica writes to it.
    await pair.startServer(pair.primary, false);
    expect([await pair.timeline(pair.primary), await pair.timeline(pair.standby)]).toEqual([1, 2]);
    const oldEntries = await entryCount(pair.primary);
    await pair.kill(pair.standby);
    const fenced = await Promise.all(
      [0, 1].map((i) => c().replicas[i]!.mcp.sign('k0', c().transfer('k0', 1, `fenced ${i}`))),
    );
    for (const reply of fenced) {
      expect(codeOf(reply)).toBe('ledger_unavailable');
      expect(reply.text).toMatch(/behind timeline 2/);
    }
    for (const i of [0, 1]) expect((await readyDetail(i)).status).toBe(503);
    expect(await entryCount(pair.primary)).toBe(oldEntries);
    expect(await writesSinceStart(pair.primary)).toBe(0);
  }, 360_000);
});

/** The signatures a replica's failover check logged for `key` (its error line, JSON). */
function failoverCheckLog(stderr: string, key: string): string[] {
  return stderr
    .split('\n')
    .filter((l) => l.includes('"failover check: landed spends'))
    .flatMap((l) => {
      const line = JSON.parse(l) as { key?: string; signatures?: string[] };
      return line.key === key ? (line.signatures ?? []) : [];
    });
}

/** `outcome[/failed_check] count`, most frequent first. */
function outcomes(runs: Run[]): string {
  const counts = new Map<string, number>();
  for (const r of runs) {
    const k = r.report
      ? `${r.report.outcome}${r.report.failed_check ? `/${r.report.failed_check}` : ''}`
      : `error/${r.code}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

async function entryCount(s: PgServerHandle): Promise<number> {
  const res = await admin(s.url, (c) => c.query<{ n: number }>('SELECT count(*)::int AS n FROM entries'));
  return res.rows[0]!.n;
}

/** Rows inserted, updated or deleted in the ledger's tables since the server started (its counters reset then). */
async function writesSinceStart(s: PgServerHandle): Promise<number> {
  const res = await admin(s.url, (c) =>
    c.query<{ n: number }>(
      'SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::int AS n FROM pg_stat_user_tables',
    ),
  );
  return res.rows[0]!.n;
}
