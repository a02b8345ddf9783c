/**
 * A PostgreSQL primary and a streaming standby of our own on loopback, for the failover test and the failover
 * benchmark (here, so the benchmark's build does not pull in test code): `initdb`, the primary started,
 * `pg_basebackup -R` from it, the standby started and streaming (with `link`, through a link of ours,
 * bench/replication-link.ts, which holdReplication stops carrying the primary's bytes: asynchronous replication's
 * loss made to happen). The
 * caller plays the orchestrator (Patroni,
 * CloudNativePG, a managed service): it kills the primary, promotes the standby, and can start the former primary
 * again as it was, unaware of the failover. `standby: false` gives the primary alone, for the benchmark's run in
 * which the one server is killed and started again in place.
 *
 * The primary's synchronous_standby_names is set after the base backup, so the standby does not copy it: once
 * promoted it has no synchronous standby of its own to wait for (as an orchestrator would leave it with only one
 * server left).
 *
 * PostgreSQL refuses to run as root: as root, every binary runs as the `postgres` user (runuser), and the data
 * directories belong to it. A process exit handler kills both servers if a test worker dies first.
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { startReplicationLink, type ReplicationLink } from './replication-link';

const run = promisify(execFile);

/** The newest installed server's binaries (Debian's layout), or those on PATH. */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] === undefined ? '' : path.join(root, versions[0], 'bin');
}

const BIN = binDir();
const AS_POSTGRES = process.getuid?.() === 0;

/** Whether the binaries the pair needs are installed (the test says so and skips when they are not). */
export const pgPairAvailable = (): boolean => BIN !== '' && fs.existsSync(path.join(BIN, 'pg_basebackup'));

async function pg(tool: string, args: string[]): Promise<string> {
  const file = path.join(BIN, tool);
  const { stdout } = AS_POSTGRES
    ? await run('runuser', ['-u', 'postgres', '--', file, ...args], { cwd: os.tmpdir() })
    : await run(file, args, { cwd: os.tmpdir() });
  return stdout;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Postmasters started here and still running: SIGKILLed if the test process exits first. */
const live = new Set<number>();
process.once('exit', () => {
  for (const pid of live) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export interface PgServerHandle {
  name: 'primary' | 'standby';
  port: number;
  dataDir: string;
  /** postgres://postgres@127.0.0.1:port/<db>, for the test's own reads. */
  url: string;
}

export const PAIR_DB = 'signer';

export class PgPair {
  /** The standby's way to the primary (its primary_conninfo names this); null without a standby. */
  private link: ReplicationLink | null = null;

  private constructor(
    readonly dir: string,
    readonly primary: PgServerHandle,
    /** Never started when the pair has no standby. */
    readonly standby: PgServerHandle,
    readonly synchronous: boolean,
    readonly hasStandby: boolean,
  ) {}

  /** The multi-host URL the replicas are given: primary first, as an operator would write it. */
  get multiHostUrl(): string {
    const hosts = [this.primary, ...(this.hasStandby ? [this.standby] : [])].map((s) => `127.0.0.1:${s.port}`);
    return `postgres://postgres@${hosts.join(',')}/${PAIR_DB}?target_session_attrs=read-write`;
  }

  /**
   * `link`: the standby streams through a ReplicationLink, so holdReplication can hold it. Off by default: the link
   * is forwarded by the calling process, whose own load then delays every synchronous commit.
   */
  static async start(opts: { synchronous: boolean; standby?: boolean; link?: boolean }): Promise<PgPair> {
    const hasStandby = opts.standby ?? true;
    if (!pgPairAvailable()) throw new Error('PostgreSQL server binaries (initdb, pg_basebackup) are not installed');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-pgpair-'));
    if (AS_POSTGRES) execFileSync('chown', ['postgres:postgres', dir]);
    const [p1, p2] = [await freePort(), await freePort()];
    const handle = (name: 'primary' | 'standby', port: number): PgServerHandle => ({
      name,
      port,
      dataDir: path.join(dir, name),
      url: `postgres://postgres@127.0.0.1:${port}/${PAIR_DB}`,
    });
    const pair = new PgPair(
      dir,
      handle('primary', p1),
      handle('standby', p2),
      opts.synchronous && hasStandby,
      hasStandby,
    );
    try {
      await pg('initdb', ['-D', pair.primary.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale']);
      await pair.startServer(pair.primary, false);
      await admin(pair.primary.url.replace(`/${PAIR_DB}`, '/postgres'), (c) => c.query(`CREATE DATABASE ${PAIR_DB}`));
      if (!hasStandby) return pair;
      // Through the link, so the primary_conninfo that -R writes names it too.
      if (opts.link === true) pair.link = await startReplicationLink(p1);
      await pg('pg_basebackup', [
        '-d',
        `host=127.0.0.1 port=${pair.link?.port ?? p1} user=postgres application_name=standby1`,
        '-D',
        pair.standby.dataDir,
        '-R',
        '-X',
        'stream',
        '-c',
        'fast',
      ]);
      await pair.startServer(pair.standby, false);
      // Synchronous only now that the standby exists (a commit would wait for it), and in the primary's own
      // postgresql.auto.conf, which the standby's copy was taken before.
      if (opts.synchronous)
        await admin(pair.primary.url, async (c) => {
          await c.query("ALTER SYSTEM SET synchronous_standby_names = 'standby1'");
          await c.query('SELECT pg_reload_conf()');
        });
      await pair.waitStreaming();
      return pair;
    } catch (e) {
      pair.close();
      throw e;
    }
  }

  /**
   * Starts a server on its data directory. `synchronous`: commits wait for the standby named standby1
   * (synchronous_commit stays at its default, on). fsync is off: a SIGKILLed server keeps what it wrote in the
   * operating system's cache, and the test never crashes the machine.
   */
  async startServer(s: PgServerHandle, synchronous: boolean): Promise<void> {
    const options = [
      `-c port=${s.port}`,
      `-c listen_addresses=127.0.0.1`,
      `-c unix_socket_directories=${this.dir}`,
      '-c wal_level=replica',
      '-c max_wal_senders=4',
      '-c hot_standby=on',
      '-c fsync=off',
      '-c max_connections=200',
      ...(synchronous ? ['-c synchronous_standby_names=standby1'] : []),
    ].join(' ');
    await pg('pg_ctl', [
      'start',
      '-w',
      '-t',
      '60',
      '-D',
      s.dataDir,
      '-l',
      path.join(this.dir, `${s.name}.log`),
      '-o',
      options,
    ]);
    live.add(this.postmasterPid(s));
  }

  private postmasterPid(s: PgServerHandle): number {
    return Number(fs.readFileSync(path.join(s.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** Until the standby streams from the primary (in sync, when the pair is synchronous). */
  private async waitStreaming(): Promise<void> {
    const want = this.synchronous ? 'sync' : 'async';
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await admin(this.primary.url, (c) =>
        c.query<{ sync_state: string }>(
          "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1' AND state = 'streaming'",
        ),
      );
      if (res.rows[0]?.sync_state === want) return;
      if (Date.now() > deadline) throw new Error(`the standby is not streaming (${want}) after 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * kill -9 of the whole server, postmaster and backends at once (a node or container dying), and wait until every
   * process is gone: the port refuses, and the data directory can be started again.
   */
  async kill(s: PgServerHandle): Promise<void> {
    const pid = this.postmasterPid(s);
    const pids = [pid, ...childrenOf(pid)];
    for (const p of pids) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // exited on its own meanwhile
      }
    }
    live.delete(pid);
    // The primary's node is gone and its connections with it: the standby's too, and anything held on the way.
    if (s === this.primary) this.link?.cut();
    const deadline = Date.now() + 30_000;
    while (pids.some(alive) || (await acceptsConnections(s.port))) {
      if (Date.now() > deadline) throw new Error(`${s.name} still runs 30 s after kill -9`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Its lock file names a pid that may linger as a zombie nobody reaps here, which would stop a restart: the
    // server is gone, as after a node's reboot.
    fs.rmSync(path.join(s.dataDir, 'postmaster.pid'), { force: true });
    fs.rmSync(path.join(this.dir, `.s.PGSQL.${s.port}.lock`), { force: true });
  }

  /**
   * Holds asynchronous replication open, as a partition or a stalled link would: waits until the standby has
   * flushed all WAL the primary had written when this was called, then stops the link between them carrying the
   * primary's bytes (bench/replication-link.ts). From then on the primary goes on acknowledging commits (it waits
   * for no standby) whose WAL never reaches the standby: a kill of the primary loses exactly those.
   * `caughtUpAt`: every commit acknowledged before it is on the standby; `heldAt`: none whose WAL was written
   * after it is.
   */
  async holdReplication(): Promise<{ caughtUpAt: number; heldAt: number }> {
    const link = this.link;
    if (link === null) throw new Error('the pair was started without a replication link');
    const caughtUpAt = Date.now();
    await admin(this.primary.url, async (c) => {
      const { lsn } = (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!;
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await c.query<{ flushed: boolean }>(
          "SELECT flush_lsn >= $1::pg_lsn AS flushed FROM pg_stat_replication WHERE application_name = 'standby1'",
          [lsn],
        );
        if (res.rows[0]?.flushed === true) return;
        if (Date.now() > deadline) throw new Error(`the standby has not flushed ${lsn} after 30 s`);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    link.hold();
    return { caughtUpAt, heldAt: Date.now() };
  }

  /** The orchestrator's promotion: the standby leaves recovery on a new timeline and takes writes. */
  async promote(s: PgServerHandle): Promise<void> {
    await pg('pg_ctl', ['promote', '-w', '-t', '60', '-D', s.dataDir]);
  }

  /** The server's WAL timeline now (the first 8 hex digits of its current WAL file name). */
  async timeline(s: PgServerHandle): Promise<number> {
    const res = await admin(s.url, (c) =>
      c.query<{ wal: string }>('SELECT pg_walfile_name(pg_current_wal_lsn()) AS wal'),
    );
    return Number.parseInt(res.rows[0]!.wal.slice(0, 8), 16);
  }

  close(): void {
    void this.link?.close();
    for (const s of [this.primary, this.standby]) {
      try {
        const pid = this.postmasterPid(s);
        if (live.has(pid)) {
          process.kill(pid, 'SIGKILL');
          live.delete(pid);
        }
      } catch {
        // never started, or already killed
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // exited while listing
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
}

async function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Runs fn on a short-lived connection to `url`. */
export async function admin<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}
