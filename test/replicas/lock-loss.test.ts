/**
 * Two real replicas racing signs for one key against one cap while the first one's key lock is lost: its
 * PostgreSQL backend is terminated (a dropped connection, a failover, a DBA's pg_terminate_backend) at a step of
 * the sign. The other replica takes the lock at once; the first must notice before it sends, so the cap is never
 * passed and `audit verify` tells the truth about what was signed.
 */
import fs from 'node:fs';
import { Client } from 'pg';
import { LAMPORTS_PER_SIGNATURE } from '../../src/localnet/fees';
import { dbUrl, lockHolders, terminateLockHolders } from '../ledger/pg';
import { McpHttpClient, type ToolReply } from './mcp-http';
import { ReplicaCluster, closeCluster, waitFor } from './cluster';
import { stillPending } from '../support/async';

const AMOUNT = 1_000_000;
/** One transfer and its fee reservation fit; a second one does not. */
const CAP = AMOUNT + AMOUNT / 2;

describe('a key lock lost in the middle of a sign (two replicas, one cap)', () => {
  let cluster: ReplicaCluster;

  beforeAll(async () => {
    cluster = await ReplicaCluster.start({
      keys: {
        during_approval: { approval: 'confirm', daily_lamport_cap: CAP },
        while_waiting: { approval: 'confirm', daily_lamport_cap: CAP },
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
  const pendingApprovals = (key: string) =>
    db(async (c) => (await c.query("SELECT id FROM approvals WHERE key = $1 AND status = 'pending'", [key])).rowCount);
  /** Approves every pending request of the key in one statement, so both replicas go on at the same instant. */
  const approveAllAtOnce = (key: string) =>
    db((c) =>
      c.query(
        "UPDATE approvals SET status = 'approved', decided_by = 'operator', decided_at = $2 WHERE key = $1 AND status = 'pending'",
        [key, Math.floor(Date.now() / 1000)],
      ),
    );

  /** What the replicas sent for the key, read from the chain's side: lamports that reached the destination. */
  const delivered = (key: string) => cluster.balance(cluster.keys[key]!.destination);

  async function expectCapHeldAndTruthfulAudit(key: string, replies: ToolReply[]): Promise<void> {
    const confirmed = replies.filter((x) => x.structured?.outcome === 'confirmed');
    expect(confirmed).toHaveLength(1); // one of the two signs, never both
    await new Promise((res) => setTimeout(res, 300)); // anything sent by the loser would have landed by now
    expect(await delivered(key)).toBe(AMOUNT);
    expect(cluster.localnet.stats().sends).toBeGreaterThan(0);

    const entries = await cluster.entries(key);
    const intents = entries.filter((e) => e.command === 'sign-intent');
    expect(intents).toHaveLength(1); // the loser wrote no intent: nothing of it could have been sent
    const [view] = (await r(1).tool('key_show', { key })).structured!.keys as { spent_or_reserved_24h: number }[];
    expect(view!.spent_or_reserved_24h).toBeLessThanOrEqual(CAP);
    expect(view!.spent_or_reserved_24h).toBe(AMOUNT + LAMPORTS_PER_SIGNATURE);

    const verify = await cluster.cli(['audit', 'verify']);
    expect(verify.stdout.trim()).toMatch(/^ok: \d+ entries$/);
    expect(verify.code).toBe(0);
  }

  it('lost while the holder waits for approval (usage already read), both approved at once', async () => {
    const key = 'during_approval';
    const first = r(0).sign(key, cluster.transfer(key, AMOUNT, 'first'));
    await waitFor(async () => (await pendingApprovals(key)) === 1, 20_000, "replica 1's approval request");
    const second = r(1).sign(key, cluster.transfer(key, AMOUNT, 'second'));
    expect(await stillPending(second, 200)).toBe(true); // queued on replica 1's lock
    expect(await terminateLockHolders(cluster.db, key)).toBe(1);
    await waitFor(async () => (await pendingApprovals(key)) === 2, 20_000, "replica 2's approval request");
    await approveAllAtOnce(key);
    const replies = await Promise.all([first, second]);
    // The loser either noticed its lost lock at its intent, or (when the winner's intent was already durable by
    // then) was refused by the cap: never both sent.
    // A refusal is an error result too (isError is false only for ok, confirmed and signed): tell them apart by the
    // report, which only the refusal has.
    const lost = replies.find((x) => x.structured?.outcome !== 'confirmed')!;
    if (lost.structured === null) expect(lost.text).toMatch(/lock on key during_approval was lost/);
    else expect(McpHttpClient.report(lost)).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
    await expectCapHeldAndTruthfulAudit(key, replies);
  }, 60_000);

  it("lost by the waiting replica's backend: the waiter queues again and the cap still holds", async () => {
    const key = 'while_waiting';
    const first = r(0).sign(key, cluster.transfer(key, AMOUNT, 'first'));
    await waitFor(async () => (await pendingApprovals(key)) === 1, 20_000, "replica 1's approval request");
    const holder = (await lockHolders(cluster.db, key))[0];
    const second = r(1).sign(key, cluster.transfer(key, AMOUNT, 'second'));
    // The waiter's backend is the one in the database waiting on the same advisory lock.
    let waiter: number | undefined;
    await waitFor(
      async () => {
        waiter = await db(async (c) => {
          const res = await c.query(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
            [cluster.db],
          );
          return (res.rows[0] as { pid: number } | undefined)?.pid;
        });
        return waiter !== undefined && waiter !== holder;
      },
      10_000,
      "replica 2's wait for the lock",
    );
    await db((c) => c.query('SELECT pg_terminate_backend($1)', [waiter]));
    expect(await stillPending(second, 200)).toBe(true); // it still waits: replica 1 still holds the key
    await approveAllAtOnce(key);
    const replies = await Promise.all([first, second]);
    // The cap is checked before an operator is asked: replica 2 is refused without a request of its own.
    expect(McpHttpClient.report(replies[1])).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
    expect(await pendingApprovals(key)).toBe(0);
    await expectCapHeldAndTruthfulAudit(key, replies);
  }, 60_000);

  it('lost after the intent, while the holder waits for confirmation: the other replica counts the reservation', async () => {
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
      const second = r(1).sign(key, cluster.transfer(key, AMOUNT, 'second'));
      expect(await terminateLockHolders(cluster.db, key)).toBe(1);
      const refused = McpHttpClient.report(await second);
      expect(refused).toMatchObject({ outcome: 'refused', failed_check: 'limits' });
      cluster.localnet.faults.stallConfirmations(false);
      replies = [await first, await second];
    } finally {
      cluster.localnet.faults.stallConfirmations(false);
    }
    await expectCapHeldAndTruthfulAudit(key, replies);
  }, 60_000);

  it('the operator CLI lists the lock a replica holds, and an audit export verifies against the head it printed', async () => {
    const key = 'operator_view';
    cluster.localnet.faults.stallConfirmations(true);
    try {
      const signing = r(0).sign(key, cluster.transfer(key, AMOUNT, 'held'));
      await waitFor(async () => (await lockHolders(cluster.db, key)).length === 1, 20_000, 'the key lock');
      const listed = await cluster.cli(['locks', 'list']);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^${key}\\s+held\\s+sa-forge-signer@\\S+ \\(backend \\d+\\)`, 'm'));
      const refused = await cluster.cli(['locks', 'clear', key]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/live holder/);
      cluster.localnet.faults.stallConfirmations(false);
      expect(McpHttpClient.report(await signing).outcome).toBe('confirmed');
    } finally {
      cluster.localnet.faults.stallConfirmations(false);
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
