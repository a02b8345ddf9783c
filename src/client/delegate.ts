/**
 * `sa-forge-signer/delegate`: narrowing a credential in an agent's own code, offline, before handing it to a
 * sub-agent. The result allows at most what the credential given allows (a block can only add checks), and the
 * sub-agent can narrow it again. No signer is contacted: the root public key (printed by `token new --biscuit`)
 * only verifies the credential before a block is added to it. docs/credentials.md lists the checks, so agents in
 * other languages can do the same with their Biscuit library.
 *
 *   import { narrow } from 'sa-forge-signer/delegate';
 *   const { credential } = narrow(mine, { rootPublicKey, keys: ['demo'], mode: 'sign_only', ttlSeconds: 3600 });
 */
import { biscuitLib } from '../credentials/biscuit-lib';
import type { NarrowMode } from '../credentials/checks';
import { narrowCredential, type MadeCredential } from '../credentials/issue';
import type { ToolName } from '../credentials/vocabulary';

export type { NarrowMode } from '../credentials/checks';
export type { ToolName } from '../credentials/vocabulary';
export type { MadeCredential } from '../credentials/issue';

export interface NarrowOptions {
  /** The signer's root public key, `ed25519/<hex>`. */
  rootPublicKey: string;
  /** Only these keys. */
  keys?: readonly string[];
  /** Only these tools (`check`, `sign`, `key_show`, `halt`). */
  tools?: readonly ToolName[];
  /** `sign_only`: signs return the signed transaction, never send it; `check`: never sign. */
  mode?: NarrowMode;
  /** Refused this many seconds from now (on the signer's clock when it judges). */
  ttlSeconds?: number;
  /** Refused from this instant on (instead of ttlSeconds). */
  expiresAt?: Date;
  /** A transaction may make the key lose at most this many lamports, fee included (judged on the simulation). */
  perTxLamports?: number;
  /** Lamports may go only to these accounts (judged on the simulation). */
  destinations?: readonly string[];
  /**
   * This block's daily budget: its signs, and those of every credential narrowed from it, all keys together, may
   * reserve and spend at most this many lamports in 24 h (kept by the signer in its ledger).
   */
  perDayLamports?: number;
  /** A transaction may take at most these dollars out of the key (`"5.00"`, a string: cents at most); unpriced: refused. */
  perTxUsd?: string;
  /** This block's daily dollar budget (`"20.00"`), kept like `perDayLamports` on the dollars each sign recorded. */
  perDayUsd?: string;
  /** A transaction may make the key lose at most `amount` base units of `mint`, for each mint listed. */
  perTxTokens?: readonly { mint: string; amount: number }[];
}

/** The credential with one more block of checks, and that block's revocation id. */
export function narrow(credential: string, opts: NarrowOptions): MadeCredential {
  const expiresAt =
    opts.expiresAt ?? (opts.ttlSeconds === undefined ? undefined : new Date(Date.now() + opts.ttlSeconds * 1000));
  return narrowCredential(biscuitLib(), credential, opts.rootPublicKey, {
    ...(opts.keys === undefined ? {} : { keys: opts.keys }),
    ...(opts.tools === undefined ? {} : { tools: opts.tools }),
    ...(opts.mode === undefined ? {} : { mode: opts.mode }),
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(opts.perTxLamports === undefined ? {} : { perTxLamports: opts.perTxLamports }),
    ...(opts.destinations === undefined ? {} : { destinations: opts.destinations }),
    ...(opts.perDayLamports === undefined ? {} : { perDayLamports: opts.perDayLamports }),
    ...(opts.perTxUsd === undefined ? {} : { perTxUsd: opts.perTxUsd }),
    ...(opts.perDayUsd === undefined ? {} : { perDayUsd: opts.perDayUsd }),
    ...(opts.perTxTokens === undefined ? {} : { perTxTokens: opts.perTxTokens }),
  });
}
