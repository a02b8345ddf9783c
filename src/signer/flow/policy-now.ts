/**
 * Gathers what rules/policy-now.ts judges of a pending approval: the request's key in the policy given, and that
 * key's usage and halt now. The engine reads its live policy and its halts; the CLI reads its config file and the
 * ledger.
 */
import type { KeyConfig } from '../../config/types';
import { noUsage, type ApprovalRecord, type HaltRecord, type Usage } from '../../ledger/types';
import type { Refusal } from '../refusals';
import { policyNowRefusal } from '../rules/policy-now';

export interface KeyStateReader {
  usage(key: KeyConfig): Promise<Usage>;
  halt(keyName: string): Promise<HaltRecord | null>;
}

export async function approvalPolicyNow(
  keys: readonly KeyConfig[],
  read: KeyStateReader,
  approval: ApprovalRecord,
): Promise<Refusal | null> {
  const key = keys.find((k) => k.name === approval.key) ?? null;
  if (key === null) return policyNowRefusal(null, approval, noUsage(), null);
  const [usage, halt] = await Promise.all([read.usage(key), read.halt(key.name)]);
  return policyNowRefusal(key, approval, usage, halt);
}
