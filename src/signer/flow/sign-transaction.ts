/**
 * sign for a transaction (mode send or sign_only): preflight → sign and simulate → approval (confirm keys; then
 * judged against the approved figures and the policy in force, after-approval.ts) → [cap gate, the key's other
 * writers kept out: usage → cap → halt → durable intent] → send and confirm; sign_only hands the signed bytes back
 * and the watcher (watch-signed.ts) writes the final audit entry. The engine (engine.ts) writes a sent sign's final.
 */
import type { SignerConfig } from '../../config/types';
import type { Ledger } from '../../ledger/types';
import type { RpcClient } from '../../rpc/types';
import type { EngineLogger } from '../engine-deps';
import type { HaltBook } from '../halts';
import type { KeyAccess } from '../key-access';
import type { KeySet } from '../../keys/key-set';
import { accountsChangedRefusal } from '../policy/rules/lookup-tables';
import { foreignFeePayerModeRefusal, signOnlyRefusal } from '../policy/rules/sign-mode';
import type { Report } from '../report';
import type { PreparedTransaction } from '../sources/transaction';
import {
  credentialBudgets,
  credentialLimitsUsd,
  credentialSpendCheck,
  type SignInput,
  type SignMode,
  type SignProgress,
} from '../types';
import { budgetPreview } from './budget-preview';
import { judgeAfterApproval, type CapKeys } from './after-approval';
import { approvalNote, awaitApproval, type ApprovalDeps } from './approval';
import type { SignRecord } from './audit';
import type { Begun } from './begin';
import { passGate } from './gate';
import { intentWatch, sentIntentDetail, signOnlyIntentDetail } from './intent-watch';
import { judgeSimulation } from './judge';
import { preflight, type PreflightDeps } from './preflight';
import { sendAndConfirm, type SendDeps } from './send-confirm';
import { simulate } from './simulate';
import { refuse, stop, type StepWith } from './step';
import { checkLanded, type TripwireDeps } from './tripwire';
import { priceReads, pricingFor, spendValue } from './usd';
import type { SignedWatcher } from './watch-signed';

/** What a transaction's sign needs of the engine. */
export interface SignFlowDeps {
  config: Pick<SignerConfig, 'cluster'>;
  /** The prices of the policy in force now (a reload may change them); null: none configured. */
  prices: () => SignerConfig['prices'] | null | undefined;
  chain: RpcClient;
  ledger: Ledger;
  halts: HaltBook;
  log: EngineLogger;
  keys: KeySet;
  access: KeyAccess;
  preflight: PreflightDeps;
  approval: ApprovalDeps;
  send: SendDeps;
  tripwire: TripwireDeps;
  watcher: SignedWatcher;
  /** The explorer's link for a signature; null: the cluster has none. */
  explorer: (signature: string) => string | null;
}

/**
 * The sign flow of a transaction whose key is settled. It holds the key's lock only inside the cap gate (passGate), so the checks, the simulation,
 * an operator's approval and the confirmation of one sign never hold up another sign of the same key.
 * `sent` tells the final entry whether the transaction may be on chain; `watched` that the watcher writes the
 * final entry (sign_only, once the intent is durable).
 */
export async function signTransaction(
  deps: SignFlowDeps,
  input: SignInput,
  mode: SignMode,
  begun: Begun,
  rec: SignRecord,
  progress: (p: SignProgress) => void,
): Promise<{ report: Report; sent: boolean; watched: boolean; landedUsd?: string | null }> {
  const { config, chain, ledger, halts, log, keys, access, watcher, explorer } = deps;
  const { preflight: preflightDeps, approval: approvalDeps, send: sendDeps, tripwire: tripwireDeps } = deps;
  const { key, source, report, payload } = begun;
  const notSent = (r: Report) => ({ report: r, sent: false, watched: false });
  const signOnly = signOnlyRefusal(key, mode);
  if (signOnly) return notSent(refuse(report, signOnly));
  const checked = await preflight(preflightDeps, { mode: 'sign', key, source, report, signal: input.signal });
  if (!checked.ok) return notSent(checked.report);
  const foreignFeePayer = checked.prepared.foreignFeePayer;
  const foreignMode = foreignFeePayerModeRefusal(key, mode, foreignFeePayer);
  if (foreignMode) return notSent(refuse(report, foreignMode));
  const signer = await keys.signerFor(key);
  /** Prepares again (a fresh blockhash where the source allows it) and re-resolves its lookup tables. */
  const rebuild = async (was: PreparedTransaction): Promise<StepWith<{ prepared: PreparedTransaction }>> => {
    const again = await source.prepare(source.refreshable ? await chain.getLatestBlockhash() : was.lifetime);
    if (!again.ok) return stop(report, again.refusal);
    const changed = accountsChangedRefusal(was.msg, again.prepared.msg);
    if (changed) return stop(report, changed);
    return { ok: true, prepared: again.prepared };
  };

  let built = await source.signed(checked.prepared, signer);
  // A key with dollar caps has its price accounts read with each simulation: a price is as fresh as the balances.
  const pricing = pricingFor(key, deps.prices() ?? undefined, credentialLimitsUsd(input.principal));
  let figures = await simulate(chain, built, key, 'sign', priceReads(pricing));
  if (figures.sim.err === 'BlockhashNotFound' && source.refreshable) {
    // The blockhash expired between fetch and simulation: rebuild and re-sign once.
    const again = await rebuild(built.prepared);
    if (!again.ok) return notSent(again.report);
    built = await source.signed(again.prepared, signer);
    figures = await simulate(chain, built, key, 'sign', priceReads(pricing));
  }
  let usd = spendValue(pricing, figures);
  // The cap is looked at before an operator is asked (nothing to approve if it would be refused), and decided
  // at the gate, under the key's lock, on the figures and usage of the moment of sending.
  const judged = judgeSimulation(key, report, figures, {
    usage: checked.usage,
    usd,
    credential: credentialSpendCheck(input.principal),
    budgets: await budgetPreview(ledger, credentialBudgets(input.principal)),
  });
  if (!judged.ok) return notSent(judged.report);

  let capKeys: CapKeys = [key];
  if (report.would_need_approval) {
    const approved = await awaitApproval(approvalDeps, {
      principal: input.principal,
      key,
      summary: payload.summary,
      payloadHash: payload.hash,
      report,
      progress,
      signal: input.signal,
      programs: rec.programs,
      destinations: figures.gains,
    });
    if (!approved.ok) return notSent(approved.report);
    rec.approval = approvalNote(approved.approval);
    // Approval can outlast the blockhash and a table can change meanwhile: send exactly what is simulated now.
    const again = await rebuild(built.prepared);
    if (!again.ok) return notSent(again.report);
    built = await source.signed(again.prepared, signer);
    const after = await simulate(chain, built, key, 'sign', priceReads(pricing));
    const afterUsd = spendValue(pricing, after);
    // Judged against what was approved and the policy in force now; the usage read before the wait is stale,
    // so the gate reads it afresh.
    const rejudged = judgeAfterApproval({
      approval: approved.approval,
      began: key,
      current: access.all.find((k) => k.name === key.name) ?? null,
      cluster: config.cluster,
      prepared: built.prepared,
      programs: rec.programs,
      figures: after,
      usd: afterUsd,
      report,
      credential: credentialSpendCheck(input.principal),
    });
    if (!rejudged.ok) return notSent(rejudged.report);
    figures = after;
    usd = afterUsd;
    capKeys = rejudged.capKeys;
  }
  report.checks.push('approval');

  const lastValid = figures.validUntil;
  // A transaction another account sends is found in the key's history, from before the first simulation on.
  const foreign = foreignFeePayer === null ? null : { feePayer: foreignFeePayer, fromSlot: figures.sim.slot };
  const gate = await passGate(
    { ledger, halts, log },
    {
      rec,
      built,
      figures,
      usd,
      report,
      signal: input.signal,
      progress,
      detail: mode === 'sign_only' ? signOnlyIntentDetail(lastValid, foreign) : sentIntentDetail(lastValid),
      watch: intentWatch(mode, lastValid, foreign),
      capKeys,
      budgets: credentialBudgets(input.principal),
    },
  );
  if (!gate.ok) return notSent(gate.report);
  // With a foreign fee payer the key's signature is not the transaction's id, so there is nothing to link yet.
  report.explorer = foreignFeePayer === null ? explorer(built.signature) : null;
  if (mode === 'sign_only') {
    report.outcome = 'signed';
    report.signed_transaction = built.wireBase64;
    report.detail =
      foreignFeePayer === null
        ? `signed, not sent: send signed_transaction before block height ${lastValid}; until it lands or expires its reservation counts against the daily cap`
        : `signed the key's slot only, not sent: the fee payer ${foreignFeePayer} must add its signature and send it before block height ${lastValid}; "signature" is the key's own, not the transaction's id (the fee payer's signature); until it lands or expires its reservation counts against the daily cap`;
    watcher.watch({
      rec,
      signature: built.signature,
      orphan: false,
      notBefore: 0,
      lastValidBlockHeight: lastValid,
      feePayer: foreignFeePayer,
      fromSlot: foreign?.fromSlot ?? 0,
      movedTokens: (report.token_changes ?? []).length > 0,
    });
    return { report, sent: true, watched: true };
  }
  progress({ stage: 'sent', signature: built.signature });
  const landed = await sendAndConfirm(sendDeps, built, lastValid, report, progress);
  const landedUsd = await checkLanded(tripwireDeps, {
    keyName: key.name,
    keyPubkey: key.pubkey,
    report,
    reservation: gate.reservation,
    usd: gate.usd,
    meta: landed,
  });
  return { report, sent: true, watched: false, landedUsd };
}
