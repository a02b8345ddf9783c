/**
 * key_show's view of one key: its settings, balance, usage, halt and whether its store can sign with it, read fresh
 * on every call. The halt is the one this process enforces (see halts.ts), and the store's status comes from the
 * keys signs use, so what an agent sees is what its next sign meets.
 */
import type { KeySet } from '../keys/key-set';
import type { RpcClient } from '../rpc/types';
import type { ClusterProfile, KeyConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import { remainingDaily, spentLamports } from './policy/rules/daily-cap';
import { keyUsage } from './flow/preflight';
import type { Usage } from '../ledger/types';
import { allowedPrograms } from './policy/rules/programs';
import { dailyLeft } from './policy/rules/tokens';
import { remainingDailyUsd } from './policy/rules/usd-caps';
import { formatUsd, type UsdMicros } from '../util/usd-amounts';
import type { HaltBook } from './halts';
import type { KeyPolicyView, KeyView } from './types';

export async function keyView(
  deps: { chain: RpcClient; ledger: Ledger; halts: HaltBook; cluster: ClusterProfile; keys: KeySet },
  key: KeyConfig,
): Promise<KeyView> {
  const [balance, usage, halt, status] = await Promise.all([
    deps.chain.getBalance(key.pubkey).catch(() => null),
    keyUsage(deps.ledger, key),
    deps.halts.current(key.name),
    deps.keys.status(key),
  ]);
  return {
    name: key.name,
    pubkey: key.pubkey,
    class: key.class,
    approval: key.approval,
    profile: key.profile,
    balance_lamports: balance,
    rate_limit_per_minute: key.rate_limit_per_minute,
    daily_lamport_cap: key.daily_lamport_cap,
    signs_last_minute: usage.signsLastMinute,
    spent_or_reserved_24h: spentLamports(usage, key.daily_lamport_cap),
    halted: halt ? { reason: halt.reason, by: halt.by, ts: halt.ts } : null,
    sign_messages: key.sign_messages === true,
    store_status: status.state,
    policy: policyView(deps.cluster, key, usage),
  };
}

function policyView(cluster: ClusterProfile, key: KeyConfig, usage: Usage): KeyPolicyView {
  const text = (n: bigint | null) => (n === null ? null : n.toString());
  return {
    per_tx_lamports: key.per_tx_lamports ?? null,
    max_fee_lamports: key.max_fee_lamports ?? null,
    approve_above_lamports: key.approve_above_lamports ?? null,
    // The count only: which operators may approve is the operators' business, not the agent's.
    approvals_required: key.approval === 'confirm' ? (key.approvals?.required ?? 1) : null,
    remaining_daily_lamports: remainingDaily(key, spentLamports(usage, key.daily_lamport_cap), 0),
    per_destination_per_day_lamports: key.per_destination_per_day_lamports ?? null,
    usd: usdView(key, usage),
    transfer_to: [...key.transfer_to],
    programs: allowedPrograms(cluster, key),
    sign_only: key.sign_only !== false,
    allow_token_ops: [...(key.allow_token_ops ?? [])],
    tokens: (key.tokens ?? []).map((p) => {
      const spent = usage.tokens.get(p.mint)?.spent ?? 0n;
      return {
        mint: p.mint,
        program: p.program,
        per_tx: text(p.per_tx),
        per_day: p.per_day.toString(),
        spent_or_reserved_24h: spent.toString(),
        remaining_daily: dailyLeft(p, usage.tokens, 0n).toString(),
        destinations: p.destinations === null ? null : [...p.destinations],
        per_destination_per_day: text(p.per_destination_per_day),
        approve_above: text(p.approve_above),
      };
    }),
  };
}

/**
 * The dollar caps as written in the config ("5.00"), with the value recorded by signs of the last 24 h: what
 * key_show gives agents and `sa-forge-signer key show` prints for operators.
 */
export function usdView(key: KeyConfig, usage: Usage): KeyPolicyView['usd'] {
  const caps = key.usd ?? null;
  if (caps === null) return null;
  const dollars = (m: UsdMicros | null) => (m === null ? null : formatUsd(m));
  return {
    per_tx: dollars(caps.per_tx),
    per_day: dollars(caps.per_day),
    approve_above: dollars(caps.approve_above),
    spent_or_reserved_24h: formatUsd(usage.usdMicros),
    remaining_daily: dollars(remainingDailyUsd(key, usage.usdMicros, null)),
  };
}
