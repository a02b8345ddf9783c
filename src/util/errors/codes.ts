/**
 * Every error code an agent or an operator can see beside the refusal reasons (src/signer/refusals.ts): when a
 * request fails before there is a report to carry a `reason`. Its context fields are in ./context.ts, its message
 * template in ./messages.ts. The code is stable; the English may change. Over MCP a tool error carries the code in
 * `structuredContent.error.code` (docs/reports.md, "Errors"); the command line prints `error: <message>` and exits 1.
 */

/** Who can meet an error: an agent over MCP (and then an operator too), or only an operator (CLI, console, start-up). */
export type SeenBy = 'agent' | 'operator';

interface ErrorSpec {
  seen_by: SeenBy;
  meaning: string;
  /** What the one who sees it should do. */
  action: string;
}

const RETRY = 'try again later; if it persists, ask the operator';

/** Every code, agent-facing first. */
export const ERRORS = {
  arguments_invalid: {
    seen_by: 'agent',
    meaning: "the tool's arguments do not match its `inputSchema` (named in the message)",
    action: 'call the tool again with arguments its `inputSchema` accepts',
  },
  payload_invalid: {
    seen_by: 'agent',
    meaning: 'the payload could not be parsed (signer://docs/payload): a request problem, not a refusal',
    action: 'build the payload again as signer://docs/payload describes',
  },
  request_invalid: {
    seen_by: 'agent',
    meaning: 'an argument other than the payload is wrong (a mode, a halt reason, an intent)',
    action: 'fix the argument the message names',
  },
  key_not_authorized: {
    seen_by: 'agent',
    meaning: 'your token may not use the named key (the same code as the `authorized` refusal)',
    action: 'use a key `key_show` lists',
  },
  key_unknown: {
    seen_by: 'agent',
    meaning: "no configured key has that name, or none has the payload's fee payer as pubkey",
    action: 'name a key `key_show` lists, or build with its pubkey as fee payer',
  },
  key_store: {
    seen_by: 'agent',
    meaning: "the key's store cannot open or sign with it now (passphrase, HSM token, PIN); nothing was signed",
    action: '`key_show` says `store_status`; ask the operator',
  },
  rpc: {
    seen_by: 'agent',
    meaning: "the chain's JSON-RPC endpoint failed (transport, node error, unexpected answer) before anything was sent",
    action: RETRY,
  },
  ledger: {
    seen_by: 'agent',
    meaning: 'the ledger could not be read or written',
    action: RETRY,
  },
  ledger_unavailable: {
    seen_by: 'agent',
    meaning:
      'no writable ledger database answered within `timings.ledger_failover_ms` (a failover in progress, or the database is down); nothing was written or sent',
    action: 'call again in a few seconds (the same payload is safe to sign again); if it persists, ask the operator',
  },
  cancelled: {
    seen_by: 'agent',
    meaning: 'the request went away, or gave up waiting for its key, before anything was sent',
    action: 'keep the connection open until the call ends, then call again',
  },
  internal: {
    seen_by: 'agent',
    meaning: 'the signer failed in a way it did not expect',
    action: 'tell the operator; the service log says more',
  },
  key_file: {
    seen_by: 'operator',
    meaning: 'a key file is missing, has loose permissions, or holds another pubkey than the config names',
    action: 'fix the file or the config the message names (docs/keys.md)',
  },
  config_invalid: {
    seen_by: 'operator',
    meaning: 'the configuration (or a file it names) is not valid, or conflicts with the running service',
    action: 'fix the setting the message names (docs/configuration.md)',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];
