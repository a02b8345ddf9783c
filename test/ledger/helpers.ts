/** Builders shared by the ledger tests. */
import type { AuditEntryInput } from '../../src/ledger/types';

/** A plausible final `sign` entry; override what the test is about. */
export function signInput(over: Partial<AuditEntryInput> = {}): AuditEntryInput {
  return {
    ts: 1_700_000_000,
    key: 'game',
    command: 'sign',
    payload_hash: 'ab'.repeat(32),
    programs: ['11111111111111111111111111111111'],
    summary: 'move fleet',
    intent: null,
    outcome: 'confirmed',
    detail: null,
    signature: null,
    slot: null,
    balance_change: null,
    ...over,
  };
}

export function intentInput(over: Partial<AuditEntryInput> = {}): AuditEntryInput {
  return signInput({ command: 'sign-intent', outcome: 'pending', ...over });
}

/** jest's asymmetric matchers are typed `any`; these give them the type of the field they stand for. */
export const matching = (pattern: RegExp | string): string => expect.stringMatching(pattern) as string;
export const containing = (text: string): string => expect.stringContaining(text) as string;
