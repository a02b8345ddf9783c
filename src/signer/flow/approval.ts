/**
 * The operator's approval for a `confirm` key: the sign records a request in the ledger and waits for
 * `sa-forge-signer approvals approve|reject ID`, up to `timings.approval_timeout_ms`. If the request that asked
 * for it goes away first (the client disconnected or gave up), the approval is marked `abandoned`: nothing is
 * sent, the sign's final audit entry says why, and a later approve is refused with the same explanation.
 */
import type { KeyConfig, Timings } from '../../config/types';
import type { ApprovalRecord, Ledger } from '../../ledger/types';
import { errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { EngineLogger } from '../engine-deps';
import type { Report } from '../report';
import type { Principal, SignProgress } from '../types';
import { principalLabel } from '../types';
import { seconds, stop, type Step } from './step';

export interface ApprovalDeps {
  ledger: Ledger;
  timings: Timings;
  log: EngineLogger;
}

export interface ApprovalInput {
  principal: Principal;
  key: KeyConfig;
  summary: string;
  payloadHash: string;
  report: Report;
  progress: (p: SignProgress) => void;
  signal: AbortSignal | undefined;
  /** A transaction: its top-level programs and the accounts its simulation credits (the console shows them). */
  programs?: readonly string[];
  destinations?: readonly { address: string; lamports: number }[];
  /** A message sign: the text the operator approves (shown escaped by `approvals list`). */
  message?: string | null;
  /** A message sign: what the text is (format, application domain, signatories), shown above it. */
  messageDescription?: string | null;
}

const GONE = 'the request that asked for it is gone (its caller disconnected or gave up); nothing was sent';

/** What the CLI says when an operator's decision comes too late for the request. */
export function approvalClosedMessage(record: ApprovalRecord, wanted: 'approved' | 'rejected'): string {
  if (record.status === 'abandoned') return `approval ${record.id} cannot be ${wanted}: ${GONE}`;
  return `approval ${record.id} is ${record.status}; it can no longer be ${wanted}`;
}

export async function awaitApproval(deps: ApprovalDeps, input: ApprovalInput): Promise<Step> {
  const { ledger, timings, log } = deps;
  const { key, report, signal } = input;
  const now = nowSeconds();
  const record = await ledger.createApproval({
    key: key.name,
    summary: input.summary,
    payload_hash: input.payloadHash,
    balance_change: report.balance_change,
    fee: report.fee,
    compute_units: report.compute_units,
    tokens: report.token_changes?.map(({ mint, decimals, change, credits }) => ({ mint, decimals, change, credits })),
    programs: input.programs ? [...input.programs] : null,
    destinations: input.destinations?.map(({ address, lamports }) => ({ address, lamports })) ?? null,
    fee_payer: report.fee_payer,
    requested_by: principalLabel(input.principal),
    ts: now,
    expires_at: now + Math.ceil(timings.approval_timeout_ms / 1000),
    message: input.message ?? null,
    message_description: input.messageDescription ?? null,
  });
  input.progress({ stage: 'approval', approval_id: record.id, expires_at: record.expires_at });
  log.info(
    { key: key.name, approval: record.id },
    'waiting for an operator: sa-forge-signer approvals approve|reject ID',
  );

  const deadline = Date.now() + timings.approval_timeout_ms;
  for (;;) {
    if (signal?.aborted) return abandon(deps, record.id, report);
    const current = await ledger.getApproval(record.id);
    if (current?.status === 'approved') return { ok: true };
    if (current?.status === 'rejected') {
      return stop(report, {
        check: 'approval',
        message: `not approved: rejected by ${current.decided_by ?? 'an operator'}`,
      });
    }
    if (Date.now() >= deadline) {
      await ledger.decideApproval(record.id, 'expired', 'signer', nowSeconds()).catch(() => undefined);
      const last = await ledger.getApproval(record.id);
      if (last?.status === 'approved') return { ok: true }; // approved in the last instant
      return stop(report, {
        check: 'approval',
        message: `not approved: no operator approved request ${record.id} within ${seconds(timings.approval_timeout_ms)} s`,
      });
    }
    await pause(Math.min(timings.approval_poll_ms, Math.max(1, deadline - Date.now())), signal);
  }
}

/** The caller is gone: nothing may be sent for it, even if an operator approves at this very moment. */
async function abandon(deps: ApprovalDeps, id: string, report: Report): Promise<Step> {
  const marked = await deps.ledger.decideApproval(id, 'abandoned', 'signer', nowSeconds()).catch((e: unknown) => {
    deps.log.error({ approval: id, err: errorMessage(e) }, 'could not mark an abandoned approval request');
    return null;
  });
  const status = marked?.status ?? 'pending';
  const note = status === 'abandoned' ? '' : ` (it stands as ${status} in the ledger)`;
  return stop(report, { check: 'approval', message: `not approved: request ${id}: ${GONE}${note}` });
}

/** Sleeps, waking early when the request is aborted. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
