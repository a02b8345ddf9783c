/**
 * `state_dir` and `ledger`: where the signer keeps its state. A SQLite file for one replica, or PostgreSQL shared by
 * several; the PostgreSQL URL may come from a file or an environment variable so its password stays out of the
 * config.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fail } from '../fail';
import { section, type Infer } from '../setting';

export const ledgerSchema = section({
  state_dir: {
    doc: "Directory for state (the SQLite ledger by default, the service lock: one service per state_dir). Relative to the config file's folder.",
    format: 'non-empty-string',
    default: 'state',
    env: 'SIGNER_STATE_DIR',
  },
  ledger: {
    store: {
      doc: '`sqlite` (one replica, the default) or `postgres` (several replicas share limits, halts, approvals and one hash chain).',
      format: ['sqlite', 'postgres'],
      default: 'sqlite',
      env: 'SIGNER_LEDGER_STORE',
    },
    path: {
      doc: "SQLite file; null means `<state_dir>/ledger.sqlite`. Relative to the config file's folder.",
      format: 'string-or-null',
      default: null,
      nullable: true,
      env: 'SIGNER_LEDGER_PATH',
    },
    url: {
      doc: 'PostgreSQL URL (postgres://user:password@host/db), or libpq\'s multi-host form for a primary and its standbys (postgres://user:password@h1:5432,h2:5432/db): the signer writes to whichever is writable, and finds it again after a failover (docs/ledger.md, "Failover"). Prefer url_file or url_env so the password stays out of the config.',
      format: 'string-or-null',
      default: null,
      nullable: true,
      sensitive: true,
      env: 'SIGNER_LEDGER_URL',
    },
    url_file: {
      doc: 'File holding the PostgreSQL URL (e.g. a mounted Kubernetes secret); surrounding whitespace is trimmed.',
      format: 'string-or-null',
      default: null,
      nullable: true,
      env: 'SIGNER_LEDGER_URL_FILE',
    },
    url_env: {
      doc: 'Name of an environment variable holding the PostgreSQL URL.',
      format: 'string-or-null',
      default: null,
      nullable: true,
      env: 'SIGNER_LEDGER_URL_ENV',
    },
    urls: {
      doc: 'PostgreSQL URLs of a primary and its standbys, instead of one URL (each may also be multi-host); the signer writes to whichever is writable. In SIGNER_LEDGER_URLS, separated by commas.',
      format: 'string-list',
      default: [],
      sensitive: true,
      env: 'SIGNER_LEDGER_URLS',
    },
    pool_size: {
      doc: 'PostgreSQL connection pool size.',
      format: 'positive-int',
      default: 10,
      env: 'SIGNER_LEDGER_POOL_SIZE',
    },
  },
});

type Raw = Infer<typeof ledgerSchema>['ledger'];

/** The ledger resolved: a SQLite file, or a PostgreSQL URL read from wherever the config names it. */
export type LedgerConfig =
  | { store: Extract<Raw['store'], 'sqlite'>; path: string }
  | {
      store: Extract<Raw['store'], 'postgres'>;
      /** As configured (`ledger.urls` a list): each may name several servers (postgres-servers.ts reads them). */
      url: string | readonly string[];
      pool_size: Raw['pool_size'];
      /** `timings.ledger_failover_ms`: how long operations wait for a writable server (default 15000). */
      failover_ms?: number;
    };

export function buildLedger(
  l: Raw,
  resolve: (p: string) => string,
  env: NodeJS.ProcessEnv,
  stateDir: string,
  failoverMs: number,
): LedgerConfig {
  if (l.store === 'sqlite') {
    return { store: 'sqlite', path: l.path === null ? path.join(stateDir, 'ledger.sqlite') : resolve(l.path) };
  }
  const sources = [l.url !== null, l.url_file !== null, l.url_env !== null, l.urls.length > 0].filter(Boolean).length;
  if (sources !== 1)
    fail('ledger: a postgres ledger needs exactly one of ledger.url, ledger.urls, ledger.url_file or ledger.url_env');
  let url: string;
  if (l.urls.length > 0) return postgresLedger(l.urls, l.pool_size, failoverMs);
  if (l.url !== null) url = l.url;
  else if (l.url_file !== null) {
    const file = resolve(l.url_file);
    try {
      url = fs.readFileSync(file, 'utf8').trim();
    } catch (e) {
      fail(`ledger.url_file: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else {
    const name = l.url_env ?? '';
    const v = env[name];
    if (v === undefined || v.trim() === '') fail(`ledger.url_env: the environment variable ${name} is not set`);
    url = v.trim();
  }
  return postgresLedger(url, l.pool_size, failoverMs);
}

/** Each URL's scheme checked now (the ledger reads their hosts when it opens); an error never shows a URL. */
function postgresLedger(url: string | string[], poolSize: number, failoverMs: number): LedgerConfig {
  for (const u of typeof url === 'string' ? [url] : url)
    if (!/^postgres(ql)?:\/\//.test(u.trim()))
      fail('ledger: the PostgreSQL URL must start with postgres:// or postgresql://');
  return { store: 'postgres', url, pool_size: poolSize, failover_ms: failoverMs };
}
