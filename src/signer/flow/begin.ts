/** The start of check and sign for a transaction: the key settled for the payload, and the report opened. */
import type { KeyConfig } from '../../config/types';
import type { RpcClient } from '../../rpc/types';
import type { KeyAccess } from '../key-access';
import type { Payload } from '../payload';
import { emptyReport, type Report } from '../report';
import { v1Source, type TransactionSource } from '../sources/transaction';
import { v2Source } from '../sources/v2-source';
import type { CheckInput } from '../types';
import { refuse, type StepWith } from './step';

/** A request whose key, payload and report are settled: the flows start from here. */
export interface Begun {
  payload: Payload;
  source: TransactionSource;
  key: KeyConfig;
  report: Report;
}

/** Settles the key for a parsed transaction payload; a key the principal may not use ends here, before any I/O. */
export function begin(access: KeyAccess, chain: RpcClient, input: CheckInput, payload: Payload): StepWith<Begun> {
  const choice = access.forPayload(input.principal, input.key, payload.feePayer);
  const report = emptyReport({
    key: choice.ok ? choice.key.name : choice.name,
    summary: payload.summary,
    warnings: [...payload.warnings],
    payload_hash: payload.hash,
  });
  if (!choice.ok) return { ok: false, report: refuse(report, choice.refusal) };
  const source = payload.version === 1 ? v1Source(payload) : v2Source(payload, chain, choice.key.pubkey);
  return { ok: true, payload, source, key: choice.key, report };
}
