/**
 * The relay's settings, all from the environment (stdio.mdx: credentials come from the environment, not from
 * the MCP authorization flow). The URL or token being unusable is not fatal: the relay starts and answers each
 * request with a -32603 that says what to fix, which an MCP client shows where a dead process would not.
 * A malformed tuning number is an operator's typo and stops the relay at once.
 */
import fs from 'node:fs';

export const DEFAULT_URL = 'http://127.0.0.1:8790/mcp';
/**
 * Per request. The service's slowest sign is an operator's approval (120 s) plus confirmation (150 s) plus RPC
 * retries; the service itself allows 10 minutes, so the relay does too and never gives up on a sign first.
 */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** After SIGTERM: how long requests still running may finish before they are answered with an error. */
export const DEFAULT_DRAIN_MS = 30_000;
export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
/** Largest reply body read from the service. */
export const DEFAULT_MAX_REPLY_BYTES = 64 * 1024 * 1024;

export interface RelayConfig {
  /** The endpoint, or why it cannot be used. */
  url: { ok: true; url: URL } | { ok: false; problem: string };
  /** The bearer token, or why there is none. Never logged. */
  token: { ok: true; token: string } | { ok: false; problem: string };
  /** The URL as it may be shown: no user info, no query. */
  shownUrl: string;
  timeoutMs: number;
  drainMs: number;
  maxLineBytes: number;
  maxReplyBytes: number;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new Error(`${name} must be a whole number above 0 (got ${JSON.stringify(raw)})`);
  return n;
}

/** The URL without credentials or query, for messages. */
export function showUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** Visible ASCII only: anything else cannot be an HTTP header value (and a trailing newline is not the token). */
function tokenProblem(token: string, where: string): string | null {
  if (token.length === 0) return `${where} is empty`;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return `the token in ${where} contains characters an HTTP header cannot carry`;
  }
  return null;
}

function readToken(env: NodeJS.ProcessEnv): RelayConfig['token'] {
  const file = env.SIGNER_TOKEN_FILE;
  if (file !== undefined && file !== '') {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      return { ok: false, problem: `cannot read SIGNER_TOKEN_FILE ${file} (${code})` };
    }
    const token = text.trim();
    const problem = tokenProblem(token, `SIGNER_TOKEN_FILE ${file}`);
    return problem ? { ok: false, problem } : { ok: true, token };
  }
  const token = env.SIGNER_TOKEN?.trim();
  if (token === undefined || token === '')
    return { ok: false, problem: 'no bearer token: set SIGNER_TOKEN_FILE (preferred) or SIGNER_TOKEN' };
  const problem = tokenProblem(token, 'SIGNER_TOKEN');
  return problem ? { ok: false, problem } : { ok: true, token };
}

function readUrl(raw: string): { url: RelayConfig['url']; shown: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return {
      url: { ok: false, problem: 'SIGNER_URL is not a URL (expected e.g. http://127.0.0.1:8790/mcp)' },
      shown: 'SIGNER_URL',
    };
  }
  const shown = showUrl(url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { url: { ok: false, problem: `SIGNER_URL ${shown} must be http: or https:` }, shown };
  return { url: { ok: true, url }, shown };
}

export function loadRelayConfig(env: NodeJS.ProcessEnv): RelayConfig {
  const { url, shown } = readUrl(env.SIGNER_URL?.trim() || DEFAULT_URL);
  return {
    url,
    token: readToken(env),
    shownUrl: shown,
    timeoutMs: positiveInt(env, 'SIGNER_RELAY_TIMEOUT_MS', DEFAULT_TIMEOUT_MS),
    drainMs: positiveInt(env, 'SIGNER_RELAY_DRAIN_MS', DEFAULT_DRAIN_MS),
    maxLineBytes: positiveInt(env, 'SIGNER_RELAY_MAX_LINE_BYTES', DEFAULT_MAX_LINE_BYTES),
    maxReplyBytes: DEFAULT_MAX_REPLY_BYTES,
  };
}
