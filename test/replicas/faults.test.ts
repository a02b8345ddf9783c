/**
 * Two real service processes on one PostgreSQL database, through the failures a deployment meets: a replica killed
 * in the middle of a sign (its intent stays charged and the other replica signs on), and the
 * database going away under load and coming back (fail closed, then recover without a restart).
 */
import { LAMPORTS_PER_SIGNATURE } from '../../src/localnet/fees';
import { McpHttpClient, type ReportView, type ToolReply } from './mcp-http';
import { ReplicaCluster, closeCluster, waitFor } from './cluster';

const AMOUNT = 1_000_000;
const FEE = LAMPORTS_PER_SIGNATURE;

describe('replica and database failures', () => {
  let cluster: ReplicaCluster;

  beforeAll(async () => {
    // The URL comes from a file, as from a mounted Kubernetes secret.
    // A short failover window: with the one server down, each sign waits this long for it, then is refused.
    cluster = await ReplicaCluster.start({
      keys: { crash: {}, steady_a: {}, steady_b: {} },
      urlFrom: 'url_file',
      timings: { ledger_failover_ms: 1_000 },
    });
  }, 90_000);
  afterAll(async () => {
    await closeCluster(cluster); // still undefined when start failed
  }, 30_000);

  const r = (i: number) => cluster.replicas[i]!.mcp;
  const intentsOf = async (key: string) => (await cluster.entries(key)).filter((e) => e.command === 'sign-intent');

  it('kill -9 of a replica in the middle of a sign: the other signs on, the orphan intent stays charged, the chain verifies', async () => {
    const payerBefore = await cluster.balance(cluster.keys.crash!.pubkey);
    cluster.localnet.faults.stallConfirmations(true); // replica 1's sign stops after sending (it holds no lock then)
    let waiting: Promise<ToolReply>;
    try {
      const doomed = r(0).sign('crash', cluster.transfer('crash', AMOUNT, 'doomed'));
      const doomedOutcome = doomed.then(
        () => 'answered',
        () => 'connection lost',
      );
      await waitFor(async () => (await intentsOf('crash')).length === 1, 20_000, "replica 1's intent");

      // Replica 2's sign for the same key does not wait for replica 1's confirmation: it writes its own intent.
      waiting = r(1).sign('crash', cluster.transfer('crash', AMOUNT + 1, 'survivor'));
      await waitFor(async () => (await intentsOf('crash')).length === 2, 20_000, "replica 2's intent");

      await cluster.kill(0);
      expect(await doomedOutcome).toBe('connection lost');
    } finally {
      cluster.localnet.faults.stallConfirmations(false);
    }

    // Replica 2 carries on and confirms.
    const survivor = McpHttpClient.report(await waiting);
    expect(survivor.outcome).toBe('confirmed');

    const entries = await cluster.entries('crash');
    const intents = entries.filter((e) => e.command === 'sign-intent');
    expect(intents).toHaveLength(2);
    const orphan = intents.find((e) => e.signature !== survivor.signature)!;
    expect(entries.some((e) => e.command === 'sign' && e.signature === orphan.signature)).toBe(false);
    expect(orphan.balance_change).toBe(-(AMOUNT + FEE));

    // The orphan keeps its whole reservation charged beside the survivor's actual spend, so the ledger never charges
    // less than left the account (the doomed transaction was sent and lands once confirmations resume).
    const [view] = (await r(1).tool('key_show', { key: 'crash' })).structured!.keys as {
      spent_or_reserved_24h: number;
    }[];
    expect(view!.spent_or_reserved_24h).toBe(2 * (AMOUNT + FEE) + 1);
    await waitFor(
      async () => (await cluster.balance(cluster.keys.crash!.destination)) === 2 * AMOUNT + 1,
      10_000,
      'the orphan transfer to land',
    );
    expect(view!.spent_or_reserved_24h).toBeGreaterThanOrEqual(
      payerBefore - (await cluster.balance(cluster.keys.crash!.pubkey)),
    );

    const verify = await cluster.cli(['audit', 'verify']);
    expect(verify.stdout.trim()).toMatch(/^ok: \d+ entries$/);
    expect(verify.code).toBe(0);

    await cluster.spawnReplica(0); // back for the next test
  }, 90_000);

  it('the database stopped and restarted under load: not ready and fail closed with no send, check works, then recovery without a restart', async () => {
    const pids = cluster.replicas.map((rep) => rep.child.pid);
    type Run = {
      replica: number;
      key: string;
      started: number;
      ended: number;
      reply: ToolReply | null;
      error: string | null;
    };
    const runs: Run[] = [];
    const inFlight = new Set<Promise<void>>();
    let stop = false;

    // Load: two keys on each replica, one sign after another per worker.
    const workers = [0, 1].flatMap((replica) =>
      ['steady_a', 'steady_b'].map(async (key) => {
        for (let i = 0; !stop; i++) {
          const run: Run = { replica, key, started: Date.now(), ended: 0, reply: null, error: null };
          const p = r(replica)
            .sign(key, cluster.transfer(key, AMOUNT, `${key} load ${replica}/${i}`))
            .then(
              (reply) => void (run.reply = reply),
              (e: unknown) => void (run.error = String(e)),
            )
            .finally(() => {
              run.ended = Date.now();
              runs.push(run);
              inFlight.delete(p);
            });
          inFlight.add(p);
          await p;
          await new Promise((res) => setTimeout(res, 20));
        }
      }),
    );
    const confirmedOn = (replica: number, since: number) =>
      runs.filter((x) => x.replica === replica && x.started >= since && x.reply?.structured?.outcome === 'confirmed')
        .length;

    try {
      await waitFor(
        () => confirmedOn(0, 0) >= 2 && confirmedOn(1, 0) >= 2,
        20_000,
        'confirmed signs on both replicas before the outage',
      );

      // The database goes away: connections cut, new ones refused.
      await cluster.proxy.refuse();
      const cutAt = Date.now();
      // Signs that were past their intent when it went may still send; wait for every one of them to settle.
      await Promise.allSettled([...inFlight]);
      const quietAt = Date.now();
      const sendsAtQuiet = cluster.localnet.stats().sends;

      for (const i of [0, 1])
        await waitFor(async () => (await r(i).ready()) === 503, 10_000, `/ready 503 on replica ${i + 1}`, 100);

      // check still works, saying what it could not preview.
      for (const i of [0, 1]) {
        const checked = McpHttpClient.report(
          await r(i).tool('check', { key: 'steady_a', payload: cluster.transfer('steady_a', AMOUNT) }),
        );
        expect(checked.outcome).toBe('ok');
        expect(checked.warnings.join('\n')).toMatch(/ledger could not be read/);
      }
      await waitFor(
        () =>
          runs.filter((x) => x.started >= quietAt && x.replica === 0).length >= 3 &&
          runs.filter((x) => x.started >= quietAt && x.replica === 1).length >= 3,
        20_000,
        'signs refused during the outage',
      );

      // Nothing reached the chain while the ledger was away.
      expect(cluster.localnet.stats().sends).toBe(sendsAtQuiet);
      const restoredAt = Date.now();
      await cluster.proxy.restore();

      const down = runs.filter((x) => x.started >= quietAt && x.ended <= restoredAt);
      expect(down.length).toBeGreaterThanOrEqual(6);
      for (const x of down) {
        expect(x.error).toBeNull(); // an answer, not a dropped connection
        expect(x.reply!.isError).toBe(true);
        // Failed before any report (nothing signed, nothing sent): the structured content is the coded error alone.
        expect(Object.keys(x.reply!.structured ?? {})).toEqual(['error']);
        expect(x.reply!.structured).toMatchObject({ error: { code: 'ledger_unavailable' } });
        expect(x.reply!.text).toMatch(
          /^error: PostgreSQL ledger: no writable database server .*(ECONNREFUSED|connect)/,
        );
      }
      expect(cutAt).toBeLessThanOrEqual(quietAt);

      // Back: ready again and signing again on both, the same processes.
      for (const i of [0, 1])
        await waitFor(async () => (await r(i).ready()) === 200, 20_000, `/ready 200 on replica ${i + 1}`, 100);
      await waitFor(
        () => confirmedOn(0, restoredAt) >= 2 && confirmedOn(1, restoredAt) >= 2,
        30_000,
        'confirmed signs on both replicas after the outage',
      );
    } finally {
      stop = true;
      await Promise.allSettled(workers);
    }
    expect(cluster.replicas.map((rep) => rep.child.pid)).toEqual(pids);
    expect(cluster.replicas.every((rep) => rep.child.exitCode === null)).toBe(true);

    // Never a send without a durable intent: every signature a report carries has its intent in the ledger.
    const intentSignatures = new Set(
      [...(await intentsOf('steady_a')), ...(await intentsOf('steady_b'))].map((e) => e.signature),
    );
    const sent = runs
      .map((x) => x.reply?.structured as ReportView | null | undefined)
      .filter((rep): rep is ReportView => !!rep?.signature);
    expect(sent.length).toBeGreaterThan(0);
    for (const rep of sent) expect(intentSignatures.has(rep.signature)).toBe(true);

    const verify = await cluster.cli(['audit', 'verify']);
    expect(verify.stdout.trim()).toMatch(/^ok: \d+ entries$/);
  }, 120_000);
});
