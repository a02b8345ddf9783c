/**
 * A presented credential's limits as `key_show` shows them to the agent holding it: every block's checks as they
 * are written, and the two figures an agent plans with read from the checks the signer's own narrowing writes
 * (checks.ts): the earliest expiry and the smallest per-transaction lamport limit. A check written another way
 * still binds (the signer judges every check); it is listed, not summarised.
 */
import { formatUsd } from '../util/usd-amounts';
import type { BudgetView, CredentialBlock, PresentedCredential } from '../signer/types';

export interface CredentialLimitsView {
  root: string;
  /** This credential's own block (0: the root itself) and its revocation id. */
  block: number;
  revocation_id: string;
  /** The earliest expiry any block states (RFC 3339), or null. */
  expires_at: string | null;
  /** The smallest per-transaction lamport limit any block states, or null. */
  per_tx_lamports: number | null;
  /** The smallest per-transaction dollar limit any block states (`"5.00"`), or null. */
  per_tx_usd: string | null;
  /** The smallest per-transaction limit of each mint a block names, in base units. */
  per_tx_tokens: Record<string, number>;
  blocks: CredentialBlock[];
  /** Each block's daily budget with its usage now (the engine reads it from the ledger). */
  budgets: BudgetView[];
}

const EXPIRY = /^check if time\(\$t\), \$t <= (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)$/;
const PER_TX = /^reject if lamports_out\(\$n\), \$n > (\d{1,16})$/;
const PER_TX_USD = /^reject if usd_micros_out\(\$n\), \$n > (\d{1,16})$/;
const PER_TX_TOKEN = /^reject if token_out\("([1-9A-HJ-NP-Za-km-z]{32,44})", \$n\), \$n > (\d{1,16})$/;

export function credentialLimits(c: PresentedCredential, budgets: readonly BudgetView[]): CredentialLimitsView {
  let expires: string | null = null;
  let perTx: number | null = null;
  let perTxUsd: number | null = null;
  const perTxTokens: Record<string, number> = {};
  for (const b of c.blocks)
    for (const check of b.checks) {
      const at = EXPIRY.exec(check)?.[1];
      if (at !== undefined && (expires === null || at < expires)) expires = at;
      const n = PER_TX.exec(check)?.[1];
      if (n !== undefined && (perTx === null || Number(n) < perTx)) perTx = Number(n);
      const u = PER_TX_USD.exec(check)?.[1];
      if (u !== undefined && (perTxUsd === null || Number(u) < perTxUsd)) perTxUsd = Number(u);
      const t = PER_TX_TOKEN.exec(check);
      if (t?.[1] !== undefined && t[2] !== undefined)
        perTxTokens[t[1]] = Math.min(perTxTokens[t[1]] ?? Number.MAX_SAFE_INTEGER, Number(t[2]));
    }
  const own = c.blocks[c.blocks.length - 1];
  return {
    root: c.root,
    block: own?.block ?? 0,
    revocation_id: own?.revocation_id ?? '',
    expires_at: expires,
    per_tx_lamports: perTx,
    per_tx_usd: perTxUsd === null ? null : formatUsd(BigInt(perTxUsd)),
    per_tx_tokens: perTxTokens,
    blocks: c.blocks.map((b) => ({ ...b, checks: [...b.checks] })),
    budgets: budgets.map((b) => ({ ...b })),
  };
}
