/**
 * A credential's spend checks (docs/credentials.md) on what the simulation says a transaction moves: the lamports
 * the key loses (fee included), the base units of each mint it loses, and the accounts that gain lamports, with the
 * destination rule's one exception (the rent of an account a program owns once created, such as a token account). The checks themselves are the
 * credential's; this only states the figures and turns the credential's refusal into a coded one.
 */
import type { KeyConfig } from '../../../config/types';
import { spendOf } from '../../../ledger/usage-book';
import type { LamportGain } from '../../flow/simulate';
import { SYSTEM_PROGRAM } from '../../../solana/programs';
import { refusal, type Refusal } from '../../refusals';
import type { UsdSpend } from '../../../pricing/usd-spend';
import { formatUsd } from '../../../util/usd-amounts';
import type { CredentialSpend, CredentialSpendCheck } from '../../types';
import { unpricedRefusal } from './credential-budget';
import type { MintFlow } from './tokens';

/**
 * With `usd` (the key's spend valued as its dollar caps value it, or null when the key is not priced) the checks see
 * `usd_micros_out`. A credential that limits dollars refuses a spend that was not valued, or whose valuation
 * refused (a price stale or missing): a `reject if` on a fact never stated would otherwise let it through.
 */
export function credentialSpendRefusal(
  credential: CredentialSpend | undefined,
  key: KeyConfig,
  balanceChange: number | null,
  gains: readonly LamportGain[],
  usd: UsdSpend | null,
  tokens: readonly MintFlow[] = [],
): Refusal | null {
  if (credential === undefined) return null;
  const { check, usdLimitedBy } = credential;
  if (balanceChange === null)
    return refusal(
      'spend_unknown',
      "the simulation did not report this key's balance, so the credential's spend limits cannot be judged",
    );
  const lamportsOut = spendOf(balanceChange);
  const destinations = gains.filter((g) => !(g.created && g.owner !== SYSTEM_PROGRAM)).map((g) => g.address);
  if (usdLimitedBy !== null && usd?.ok !== true)
    return unpricedRefusal(usdLimitedBy, lamportsOut, usd === null ? null : usd.refusal.message);
  const usdOut = usd?.ok === true ? safeFigure(usd.usd) : null;
  const tokensOut = tokens
    .filter((t) => t.keyChange < 0n)
    .map((t) => ({ mint: t.mint, amount: safeFigure(-t.keyChange) }));
  const refused = check({
    key: key.name,
    lamports_out: lamportsOut,
    destinations,
    ...(usdOut === null ? {} : { usd_micros_out: usdOut }),
    ...(tokensOut.length === 0 ? {} : { tokens_out: tokensOut }),
  });
  if (refused === null) return null;
  const [only] = destinations;
  return refusal('credential_limit', refused.message, {
    requested: lamportsOut,
    ...(destinations.length === 1 && only !== undefined ? { destination: only } : {}),
    ...(usd?.ok === true ? { usd_requested: formatUsd(usd.usd) } : {}),
  });
}

/**
 * A message moves nothing: after its approval the credential is judged again on a spend of nothing, so one that
 * expired while the operators decided signs nothing.
 */
export function credentialMessageRefusal(check: CredentialSpendCheck | undefined, key: KeyConfig): Refusal | null {
  const refused = check?.({ key: key.name, lamports_out: 0, destinations: [] }) ?? null;
  if (refused === null) return null;
  return refusal('credential_limit', `after approval: ${refused.message}`, { requested: 0 });
}

/** A figure as an integer fact holds it exactly: above that, any limit a credential can state refuses all the same. */
function safeFigure(n: bigint): number {
  return Number(n > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : n);
}
