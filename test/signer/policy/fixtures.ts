/** A key policy and usage for the policy core's unit tests: every limit set to a round figure. */
import type { KeyConfig, TokenPolicy } from '../../../src/config/types';
import type { Usage } from '../../../src/ledger/types';
import { randomAddress } from '../../support/payloads';

export const listed = randomAddress();

export function policyKey(over: Partial<KeyConfig> = {}): KeyConfig {
  return {
    name: 'k',
    class: 'session',
    pubkey: randomAddress(),
    profile: null,
    approval: 'auto',
    transfer_to: [listed],
    extra_programs: [],
    rate_limit_per_minute: 30,
    daily_lamport_cap: 1_000_000,
    allow_unattended: false,
    ...over,
  };
}

export function tokenPolicy(mint: string, over: Partial<TokenPolicy> = {}): TokenPolicy {
  return {
    mint,
    program: 'spl-token',
    per_tx: null,
    per_day: 1_000n,
    destinations: null,
    per_destination_per_day: null,
    approve_above: null,
    ...over,
  };
}

export function usage(over: Partial<Usage> = {}): Usage {
  return {
    signsLastMinute: 0,
    lamports: 0,
    unbounded: 0,
    received: new Map(),
    tokens: new Map(),
    usdMicros: 0n,
    ...over,
  };
}
