/**
 * Which of the ledger's PostgreSQL servers takes writes now, through a failover (a primary killed, a standby
 * promoted by Patroni, CloudNativePG, a managed service or a person).
 *
 * - The writable server is the one not in recovery (`pg_is_in_recovery()` false). A search asks every configured
 *   server at once and retries with backoff (50 ms doubling to 1 s) until one answers writable; after
 *   `failoverMs` from the start of the search it gives up with `ledger_unavailable`, and the next operation starts
 *   a new search. One search runs at a time; every operation that needs the primary waits on it.
 * - Fencing: a server's timeline is the one its WAL is written on now (the first 8 hex digits of the current WAL
 *   file name; `pg_control_checkpoint()` lags behind a promotion until its first checkpoint). A promotion starts a
 *   new, higher timeline. The highest timeline a writable server has shown is remembered, and a server on an older
 *   one is never written to: a former primary started again as it was also answers writable, but its timeline is
 *   the one the promoted standby left behind. If two answer writable, the higher timeline wins. Every new
 *   connection is checked the same way before it is used (postgres-driver.ts), so a write cannot reach a server
 *   this process has not judged the primary. A process that starts while only the stale former primary is up has
 *   nothing to compare it with: keeping it out is then the orchestrator's fencing (docs/ledger.md, "Failover").
 * - Replication: an acknowledged commit survives a failover only when a synchronous standby had it. Each primary
 *   found is asked, and when it has none a warning says what can be lost (shown on /ready, logged on change).
 */
import { Client, type ClientBase } from 'pg';
import { SignerError, errorMessage } from '../util/errors';
import type { PostgresServer } from './postgres-servers';

export interface ServerState {
  /** Not in recovery: it accepts writes. */
  writable: boolean;
  /** The timeline its WAL is written on now; null on a standby. */
  timeline: number | null;
  /** Why an acknowledged commit could be lost if this server failed; null when a synchronous standby has it. */
  replicationWarning: string | null;
}

/**
 * One round trip. pg_current_wal_lsn() fails during recovery, so it is only evaluated on a writable server (CASE
 * evaluates a volatile function only in the branch taken).
 */
const STATE_SQL = `SELECT pg_is_in_recovery() AS standby,
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_walfile_name(pg_current_wal_lsn()) END AS wal,
  current_setting('synchronous_standby_names') AS sync_names,
  current_setting('synchronous_commit') AS sync_commit`;

/** synchronous_commit values under which a commit is acknowledged only once a synchronous standby has it. */
const SYNC_COMMITS = new Set(['on', 'remote_write', 'remote_apply']);

export async function serverState(client: ClientBase): Promise<ServerState> {
  const res = await client.query<{ standby: boolean; wal: string | null; sync_names: string; sync_commit: string }>(
    STATE_SQL,
  );
  const row = res.rows[0];
  if (!row) throw new Error('the server state query returned no row');
  const timeline = row.wal === null ? null : Number.parseInt(row.wal.slice(0, 8), 16);
  let replicationWarning: string | null = null;
  if (row.sync_names.trim() === '')
    replicationWarning =
      'the primary has no synchronous standby (synchronous_standby_names is empty): on a failover the last acknowledged writes can be lost (docs/ledger.md, "Failover")';
  else if (!SYNC_COMMITS.has(row.sync_commit))
    replicationWarning = `synchronous_commit is ${row.sync_commit}: commits are acknowledged before the synchronous standby has them, so on a failover the last acknowledged writes can be lost (docs/ledger.md, "Failover")`;
  return { writable: !row.standby, timeline: Number.isNaN(timeline) ? null : timeline, replicationWarning };
}

export interface PrimaryOptions {
  /** Give up a search for a writable server after this long. */
  failoverMs: number;
  /** A probe's connection attempt gives up after this long. */
  connectTimeoutMs: number;
  applicationName: string;
  /** The primary changed, or its replication warning did (for the log). */
  onChange?: (primary: PostgresServer, timeline: number, replicationWarning: string | null) => void;
}

const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1_000;

export class PrimaryTracker {
  private primary: { server: PostgresServer; timeline: number } | null = null;
  /** The highest timeline a writable server has shown: a server behind it is a former primary. */
  private fence = 0;
  private searching: Promise<PostgresServer> | null = null;
  private warning: string | null = null;
  private readonly failoverListeners: ((timeline: number) => void)[] = [];
  private closed = false;
  private readonly first: PostgresServer;

  constructor(
    readonly servers: readonly PostgresServer[],
    private readonly opts: PrimaryOptions,
  ) {
    const [first] = servers;
    if (first === undefined) throw new Error('no PostgreSQL server is named');
    this.first = first;
  }

  /** The server new connections go to: the primary, or before one is known the first configured. */
  target(): PostgresServer {
    return this.primary?.server ?? this.first;
  }

  /** The primary in use, or null while it is being looked for. */
  current(): PostgresServer | null {
    return this.primary?.server ?? null;
  }

  /** The primary's replication warning (null: a synchronous standby has every acknowledged commit). */
  replicationWarning(): string | null {
    return this.warning;
  }

  /** The writable server: the one in use, or the one the running search finds (ledger_unavailable if none). */
  find(): Promise<PostgresServer> {
    if (this.primary) return Promise.resolve(this.primary.server);
    this.searching ??= this.search().finally(() => {
      this.searching = null;
    });
    return this.searching;
  }

  /**
   * Whether `server`, in `state`, may take writes: writable and not behind the newest timeline seen. A writable
   * server on a newer timeline moves the fence (a failover this process had not noticed yet).
   */
  admit(server: PostgresServer, state: ServerState): boolean {
    if (!state.writable || state.timeline === null || state.timeline < this.fence) return false;
    this.moveFence(state.timeline);
    if (this.primary?.server === server) this.primary.timeline = state.timeline;
    return true;
  }

  /**
   * Calls `listener` with the new timeline each time a writable server on a newer timeline than one already
   * written to is found: a failover happened (the first timeline this process sees is no failover).
   */
  onFailover(listener: (timeline: number) => void): void {
    this.failoverListeners.push(listener);
  }

  private moveFence(timeline: number): void {
    const before = this.fence;
    this.fence = timeline;
    if (before === 0 || timeline <= before) return;
    for (const listener of this.failoverListeners) listener(timeline);
  }

  /** A connection to `server` was lost, or it refused a write or a check: look for the primary again. */
  lost(server: PostgresServer): void {
    if (this.primary?.server === server) this.primary = null;
  }

  close(): void {
    this.closed = true;
  }

  private async search(): Promise<PostgresServer> {
    const deadline = Date.now() + this.opts.failoverMs;
    for (let wait = BACKOFF_FIRST_MS; ; wait = Math.min(2 * wait, BACKOFF_MAX_MS)) {
      const answers = await Promise.all(
        this.servers.map((server) =>
          this.probe(server).then(
            (state) => ({ server, state, error: null }),
            (e: unknown) => ({ server, state: null, error: errorMessage(e) }),
          ),
        ),
      );
      let best: { server: PostgresServer; state: ServerState; timeline: number } | null = null;
      for (const a of answers) {
        const t = a.state?.writable === true ? a.state.timeline : null;
        if (a.state && t !== null && t >= this.fence && (best === null || t > best.timeline))
          best = { server: a.server, state: a.state, timeline: t };
      }
      if (best) {
        this.moveFence(best.timeline);
        this.primary = { server: best.server, timeline: best.timeline };
        this.warning = best.state.replicationWarning;
        this.opts.onChange?.(best.server, best.timeline, this.warning);
        return best.server;
      }
      const why = answers.map((a) => `${a.server.label}: ${a.error ?? this.describe(a.state)}`).join('; ');
      if (this.closed) throw new SignerError('ledger', 'PostgreSQL ledger: the ledger is closed');
      if (Date.now() + wait > deadline) throw ledgerUnavailable(this.opts.failoverMs, why);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private describe(state: ServerState | null): string {
    if (state === null || !state.writable) return 'a standby (read-only)';
    return `writable on timeline ${String(state.timeline)}, behind timeline ${String(this.fence)} (a former primary: not written to)`;
  }

  private async probe(server: PostgresServer): Promise<ServerState> {
    const client = new Client({
      connectionString: server.url,
      connectionTimeoutMillis: this.opts.connectTimeoutMs,
      query_timeout: this.opts.connectTimeoutMs,
      application_name: this.opts.applicationName,
    });
    client.on('error', () => undefined); // the server going away mid-probe: the query fails on its own
    try {
      await client.connect();
      return await serverState(client);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** No writable server answered within the failover window: agent-visible, nothing written or sent. */
export function ledgerUnavailable(failoverMs: number, why: string): SignerError {
  return new SignerError(
    'ledger_unavailable',
    `PostgreSQL ledger: no writable database server answered within ${String(failoverMs)} ms (${why}); a failover may be in progress. Nothing was written or sent: call again in a few seconds`,
  );
}
