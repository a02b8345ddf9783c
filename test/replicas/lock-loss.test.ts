/**
 * Two real replicas racing signs for one key against one cap while a key lock is lost: a PostgreSQL backend is
 * terminated (a dropped connection, a failover, a DBA's pg_terminate_backend). A sign holds its key's lock only at
 * the cap gate (usage read, cap decision, intent), so the tests hold the sign inside that gate: they lock the chain's
 * head row, on which the intent's append waits, and let go once the fault is in place. The other replica takes the
 * lock at once; the first must notice before it sends, so the cap is never passed and `audit verify` tells the
 * truth about what was signed.
 */
import fs from 'node:fs';
import { Client } from 'pg';
import { LAMPORTS_PER_SIGNATURE } from '../../src/localnet/fees';
import { dbUrl, lockHolders, terminateLockHolders } from '../ledger/pg';
import { McpHttpClient, type ToolReply } from './mcp-http';
import { ReplicaCluster, closeCluster, waitFor } from './cluster';

const AMOUNT = 1_000_000;
/** One transfer and its fee reservation fit; a second one does not. */
const CAP = AMOUNT + AMOUNT / 2;

describe('a key lock lost in the middle of a sign (two replicas, one cap)', () => {
  let cluster: ReplicaCluster;

  beforeAll(async () => {
    cluster = await ReplicaCluster.start({
      keys: {
        at_gate: { daily_lamport_cap: CAP },
        while_waiting: { daily_lamport_cap: CAP },
        during_confirm: { daily_lamport_cap: CAP },
        operator_view: {},
      },
    });
  }, 90_000);
  afterAll(async () => {
    await closeCluster(cluster); // still undefined when start failed
  }, 30_000);

  const r = (i: number) => cluster.replicas[i]!.mcp;

  async function db<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    const c = new Client({ connectionString: dbUrl(cluster.db) });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }
  /** What the replicas sent for the key, read from the chain's side: lamports that reached the destination. */
  const delivered = (key: string) => cluster.balance(cluster.keys[key]!.destination);

  /**
   * Holds the chain's head row (as a long transaction of another client would), so every append, an intent
   * included, waits inside the cap gate with its key's lock held. The embedded chain's height stands still
   * meanwhile: its blocks come every 20 ms, so a blockhash lives 3 s, and a hold that long on a loaded machine
   * would expire the held signs' transactions, which is not what these tests are about.
   */
  async function holdChainHead(): Promise<{ release(): Promise<void> }> {
    const c = new Client({ connectionString: dbUrl(cluster.db) });
    await c.connect();
    await c.query('BEGIN');
    await c.query('SELECT seq FROM chain_head WHERE id = 1 FOR UPDATE');
    cluster.localnet.faults.freezeHeight(true);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        cluster.localnet.faults.freezeHeight(false);
        await c.query('ROLLBACK');
        await c.end();
      },
    };
  }
  /** Backends waiting for the head row: appends held at the gate. */
  const appendsWaiting = () =>
    db(async (c) => {
      const res = await c.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE '%chain_head%FOR UPDATE%' AND pid <> pg_backend_pid()",
        [cluster.db],
      );
      return (res.rows[0] as { n: number }).n;
    });
  /** Backends waiting for an advisory lock: a replica queued for a key lock. */
  const advisoryWaiters = () =>
    db(async (c) => {
      const res = await c.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
        [cluster.db],
      );
      return res.rows.map((row: { pid: number }) => row.pid);
    });

  /** Exactly one transfer (of `sent` lamports) signed, sent, charged and audited for the key. */
  async function expectCapHeldAndTruthfulAudit(key: string, replies: ToolReply[], sent: number): Promise<void> {
    const confirmed = replies.filter((x) => x.structured?.outcome === 'confirmed');
    expect(confirmed).toHaveLength(1); // one of the two signs, never both
    expect(await delivered(key)).toBe(sent);
    expect(cluster.localnet.stats().sends).toBeGreaterThan(0);

    const entries = await cluster.entries(key);
    const intents = entries.filter((e) => e.command === 'sign-intent');
    expect(intents).toHaveLength(1); // the loser wrote no intent: nothing of it could have been sent
    const [view] = (await r(1).tool('key_show', { key })).structured!.keys as { spent_or_reserved_24h: number }[];
    expect(view!.spent_or_reserved_24h).toBeLessThanOrEqual(CAP);
    expect(view!.spent_or_reserved_24h).toBe(sent + LAMPORTS_PER_SIGNATURE);

    const verify = await cluster.cli(['audit', 'verify']);
    expect(verify.stdout.trim()).toMatch(/^ok: \d+ entries$/);
    expect(verify.code).toBe(0);
  }

  it('lost at the cap gate, after the usage read and before the intent: the holder writes and sends nothing', async () => {
    const key = 'at_gate';
    const head = await holdChainHead();
    let replies: ToolReply[];
    try {
      const first = r(0).sign(key, cluster.transfer(key, AMOUNT, 'first'));
      await waitFor(async () => (await appendsWaiting()) === 1, 20_000, "replica 1's intent waiting at the gate");
      expect(await lockHolders(cluster.db, key)).toHaveLength(1);
      const second = r(1).sign(key, cluster.transfer(key, AMOUNT + 1, 'second'));
      await waitFor(async () => (await advisoryWaiters()).length === 1, 20_000, "replica 2's wait for the lock");
      expect(await terminateLockHolders(cluster.db, key)).toBe(1);
      // Replica 2 now holds the lock, has read a usage without replica 1's reservation, and waits at its append.
      await waitFor(async () => (await lockHolders(cluster.db, key)).length === 1, 20_000, "replica 2's lock");
      await waitFor(async () => (await appendsWaiting()) === 1, 20_000, "replica 2's intent waiting at the gate");
      await head.release();
      replies = await Promise.all([first, second]);
    } finally {
      await head.release();
    }
    // No report: the structured content is the coded error alone.
    expect(Object.keys(replies[0]!.structured ?? {})).toEqual(['error']);
    expect(replies[0]!.structured).toMatchObject({ error: { code: 'ledger' } });
    expect(replies[0]!.text).toMatch(/lock on key at_gate was lost/);
    expect(McpHttpClient.report(replies[1]!).outcome).toBe('confirmed');
    await expectCapHeldAndTruthfulAudit(key, replies, AMOUNT + 1);
  }, 60_000);

  it("lost by the waiting replica's backend: the waiter queues again and the cap still holds", async () => {
    const key = 'while_waiting';
    const head = await holdChainHead();
    let replies: ToolReply[];
    try {
      const first = r(0).sign(key, cluster.transfer(key, AMOUNT, 'first'));
      await waitFor(async () => (await appendsWaiting()) === 1, 20_000, "replica 1's intent waiting at the gate");
      const holder = (await lockHolders(cluster.db, key))[0];
      const second = r(1).sign(key, cluster.transfer(key, AMOUNT + 1, 'second'));
      let waiter: number | undefined;
      await waitFor(
        async () => {
          waiter = (await advisoryWaiters())[0];
          return waiter !== undefined && waiter !== holder;
        },
        20_000,
        "replica 2's wait for the lock",
      );
      await db((c) => c.query('SELECT pg_terminate_backend($1)', [waiter]));
      // It queues again on a fresh connection: replica 1 still holds the key.
      await waitFor(
        async () => {
          const again = await advisoryWaiters();
          return again.length === 1 && again[0] !== waiter;
        },
        20_000,
        "replica 2's second wait for the lock",
      );
      await head.release();
      replies = await Promise.all([first, second]);
    } finally {
      await head.release();
    }
    expect(McpHttpClient.report(replies[0]!).outcome).toBe('confirmed');
    // Replica 2 read the usage under the lock after replica 1's intent: refused by the cap, nothing written.
    expect(McpHttpClient.report(replies[1]!)).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
    await expectCapHeldAndTruthfulAudit(key, replies, AMOUNT);
  }, 60_000);

  it('after the intent no lock is held: while the first waits for confirmation the other replica is refused by its reservation at once', async () => {
    const key = 'during_confirm';
    cluster.localnet.faults.stallConfirmations(true);
    let replies: ToolReply[];
    try {
      const first = r(0).sign(key, cluster.transfer(key, AMOUNT, 'first'));
      await waitFor(
        async () => (await cluster.entries(key)).some((e) => e.command === 'sign-intent'),
        20_000,
        "replica 1's intent",
      );
      expect(await lockHolders(cluster.db, key)).toEqual([]);
      const refused = McpHttpClient.report(await r(1).sign(key, cluster.transfer(key, AMOUNT + 1, 'second')));
      expect(refused).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
      cluster.localnet.faults.stallConfirmations(false);
      replies = [await first];
    } finally {
      cluster.localnet.faults.stallConfirmations(false);
    }
    await expectCapHeldAndTruthfulAudit(key, replies, AMOUNT);
  }, 60_000);

  it('the operator CLI lists the lock a replica holds, and an audit export verifies against the head it printed', async () => {
    const key = 'operator_view';
    const headRow = await holdChainHead();
    try {
      const signing = r(0).sign(key, cluster.transfer(key, AMOUNT, 'held'));
      await waitFor(async () => (await lockHolders(cluster.db, key)).length === 1, 20_000, 'the key lock');
      await waitFor(async () => (await appendsWaiting()) === 1, 20_000, 'the intent waiting at the gate');
      // Both at once: the held append waits at most the replica's statement timeout, and a CLI start is slow on a
      // loaded machine.
      const [listed, refused] = await Promise.all([
        cluster.cli(['locks', 'list']),
        cluster.cli(['locks', 'clear', key]),
      ]);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^${key}\\s+held\\s+sa-forge-signer@\\S+ \\(backend \\d+\\)`, 'm'));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/live holder/);
      await headRow.release();
      expect(McpHttpClient.report(await signing).outcome).toBe('confirmed');
    } finally {
      await headRow.release();
    }
    expect((await cluster.cli(['locks', 'list'])).stdout).not.toMatch(new RegExp(`^${key}\\b`, 'm'));

    const file = `${cluster.dir}/audit.jsonl`;
    const exported = await cluster.cli(['audit', 'export', '--out', file]);
    expect(exported.code).toBe(0);
    const head = exported.stdout.trim();
    expect(head).toMatch(/^\d+:[0-9a-f]{64}$/);
    const verified = await cluster.cli(['audit', 'verify', '--file', file, '--head', head]);
    expect(verified.stdout.trim()).toMatch(/^ok: \d+ entries$/);
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    fs.writeFileSync(file, lines.slice(0, -1).join('\n') + '\n');
    expect((await cluster.cli(['audit', 'verify', '--file', file])).stdout.trim()).toMatch(/^ok: /);
    const cut = await cluster.cli(['audit', 'verify', '--file', file, '--head', head]);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toMatch(/entries are missing from the end/);
  }, 60_000);
});
