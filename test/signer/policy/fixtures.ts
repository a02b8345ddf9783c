/** A key policy and usage for the policy core's unit tests: every limit set to a round figure. */
import type { KeyConfig, TokenPolicy } from '../../../src/config/types';
import type { Usage } from '../../../src/ledger/types';
import type { CompiledMessage } from '../../../src/signer/compile';
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

/** A compiled message as the structural rules read it: its accounts, header counts and instructions (no bytes). */
export function compiled(
  accountKeys: string[],
  instructions: { program: number; accounts?: number[]; data?: number[] }[],
  header: { signers?: number; readonlySigned?: number; readonlyUnsigned?: number } = {},
): CompiledMessage {
  return {
    numRequiredSignatures: header.signers ?? 1,
    numReadonlySigned: header.readonlySigned ?? 0,
    numReadonlyUnsigned: header.readonlyUnsigned ?? 0,
    accountKeys,
    recentBlockhash: randomAddress(),
    instructions: instructions.map((ix) => ({
      programIdIndex: ix.program,
      accountIndices: ix.accounts ?? [],
      data: Uint8Array.from(ix.data ?? []),
    })),
    bytes: new Uint8Array(0),
  };
}
