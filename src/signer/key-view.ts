/**
 * key_show's view of one key: its settings, balance, usage and halt, read fresh on every call. The halt is the one
 * this process enforces (see halts.ts), so what an agent sees is what its next sign meets.
 */
import type { ChainClient } from '../chain/types';
import type { KeyConfig } from '../config/types';
import type { Ledger } from '../ledger/types';
import { keyUsage } from './flow/preflight';
import type { HaltBook } from './halts';
import type { KeyView } from './types';

export async function keyView(
  deps: { chain: ChainClient; ledger: Ledger; halts: HaltBook },
  key: KeyConfig,
): Promise<KeyView> {
  const [balance, usage, halt] = await Promise.all([
    deps.chain.getBalance(key.pubkey).catch(() => null),
    keyUsage(deps.ledger, key),
    deps.halts.current(key.name),
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
    spent_or_reserved_24h: usage.spent24h,
    halted: halt ? { reason: halt.reason, by: halt.by, ts: halt.ts } : null,
    sign_messages: key.sign_messages === true,
  };
}
