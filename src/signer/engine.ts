/**
 * The signer engine: the order of the flows, each step in its own module under flow/.
 *
 *   check: preflight → simulate
 *   sign:  preflight → sign and simulate → approval (confirm keys; then judged against the approved figures and
 *          the policy in force, flow/after-approval.ts) →
 *          [cap gate, the key's other writers kept out: usage → cap → halt → durable intent] → send and confirm →
 *          final audit entry
 *   sign_only: the same up to the durable intent, then the signed bytes are returned and the watcher writes the
 *          final audit entry once the signature lands or its blockhash expires
 *
 * It knows nothing of HTTP or MCP; every entrypoint calls it through SignerEngine. docs/policy.md describes the
 * checks, the report and the outcomes.
 */
import { nowSeconds } from '../util/time';
import type { KeyConfig } from '../config/types';
import { votersOf } from '../ledger/records';
import { SignerError, errorMessage } from '../util/errors';
import { silentLogger, type EngineDeps } from './engine-deps';
import { approvalNeeded, approvalNote, awaitApproval } from './flow/approval';
import type { SignRecord } from './flow/audit';
import { writeFinal } from './flow/audit';
import { judgeAfterApproval, type CapKeys } from './flow/after-approval';
import { passGate } from './flow/gate';
import { judgeSimulation } from './flow/judge';
import { keyUsage, preflight } from './flow/preflight';
import { approvalPolicyNow } from './flow/policy-now';
import { sendAndConfirm } from './flow/send-confirm';
import { signatureNoticesFor } from '../rpc/signature-notices';
import { checkLanded } from './flow/tripwire';
import { simulate } from './flow/simulate';
import { priceReads, pricingFor, spendValue } from './flow/usd';
import { refuse, stop, type StepWith } from './flow/step';
import { v1Source, type PreparedTransaction, type TransactionSource } from './sources/transaction';
import { v2Source } from './sources/v2-source';
import { intentWatch, sentIntentDetail, signOnlyIntentDetail } from './flow/intent-watch';
import { createSignedWatcher } from './flow/watch-signed';
import { createHaltBook } from './halts';
import { createTreasuryReconciler } from '../treasury/reconcile';
import { haltKeys } from './halt-keys';
import { signRefusedByCap } from '../notify/events';
import { createOutbox } from '../notify/outbox';
import { refusalThrottle } from '../notify/throttle';
import { heldHaltsFile } from './held-halts-file';
import { fixedPolicy, liveAccess, liveKeySet, policyFor } from './policy';
import { keyView } from './key-view';
import { createMessageFlow } from './message/flow';
import { parseRequestPayload } from './message/request';
import type { Payload } from './payload';
import { accountsChangedRefusal } from './policy/rules/lookup-tables';
import { foreignFeePayerModeRefusal, signOnlyRefusal } from './policy/rules/sign-mode';
import { emptyReport, type Report } from './report';
import type { CheckInput, SignerEngine, SignInput, SignMode, SignProgress } from './types';
import { credentialNote, credentialSpendCheck, principalLabel } from './types';

export type { EngineDeps, EngineLogger } from './engine-deps';

/** A request whose key, payload and report are settled: the flows start from here. */
interface Begun {
  payload: Payload;
  source: TransactionSource;
  key: KeyConfig;
  report: Report;
}

export function createEngine(deps: EngineDeps): SignerEngine {
  const { config, chain, ledger } = deps;
  const log = deps.logger ?? silentLogger;
  // The policy (keys, caps, tokens) is read through one indirection, so `reload` can replace it while signs run.
  const policy = deps.policy ?? fixedPolicy(policyFor(config));
  const access = liveAccess(policy);
  const keys = liveKeySet(policy);
  const notifier = deps.notifier ?? createOutbox({ ledger, hooks: config.notify?.hooks ?? [], log });
  const halts = createHaltBook({ ledger, log, file: heldHaltsFile(config.state_dir), notify: notifier });
  const preflightDeps = { cluster: config.cluster, chain, ledger, halts };
  const voters = () => votersOf(policy().operators);
  const approvalDeps = { ledger, timings: config.timings, log, notify: notifier, voters };
  const notices =
    deps.notices !== undefined
      ? deps.notices
      : signatureNoticesFor(config.cluster, config.timings, {
          onEndpoint: (e) =>
            e.state === 'down'
              ? log.warn(
                  { endpoint: e.endpoint, err: e.detail },
                  'WebSocket endpoint down: confirmations are polled until it answers again',
                )
              : log.info({ endpoint: e.endpoint }, 'WebSocket endpoint answers again: confirmations are pushed'),
        });
  const sendDeps = { chain, timings: config.timings, notices };
  const messages = createMessageFlow({ access, keys, halts, ledger, approval: approvalDeps, log });
  const tripwireDeps = { halts, log, observer: deps.observer };
  const treasuries = createTreasuryReconciler({
    keys: () => policy().keys,
    chain,
    audit: ledger,
    halts,
    notify: notifier,
    now: nowSeconds,
  });
  let reconciling = false;
  // Only a process with treasury keys at start runs the passes; a reload that adds the first one needs a restart.
  const reconcileTimer = policy().keys.some((k) => k.treasury !== undefined)
    ? setInterval(() => {
        // A pass still running (a slow RPC) is not overlapped: the next tick starts the next one.
        if (reconciling) return;
        reconciling = true;
        treasuries
          .reconcile()
          .catch((e: unknown) => {
            log.warn(
              { err: errorMessage(e) },
              'treasury reconciliation could not read the chain or the ledger; next pass retries',
            );
          })
          .finally(() => (reconciling = false));
      }, config.timings.treasury_reconcile_ms)
    : null;
  reconcileTimer?.unref();
  const watcher = createSignedWatcher({ chain, ledger, timings: config.timings, log, tripwire: tripwireDeps, notices });
  const resumed = watcher
    .resume(config.keys)
    .then((n) => {
      if (n > 0) log.info({ signatures: n }, 'watching transactions left without a final entry by an earlier run');
    })
    .catch((e: unknown) => log.error({ err: errorMessage(e) }, 'pending transactions could not be resumed'));
  // Another process's intents (a replica killed, a commit cut by a failover) are looked for again on a cadence, not
  // only at start: a long-running replica would otherwise leave their reservations charged until a restart. Ending
  // one twice is harmless: its final entry is written under the key's lock, once.
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweepTimer = setInterval(() => {
    sweeping = Promise.all([resumed, sweeping])
      .then(() => watcher.resume(policy().keys, { orphansOnly: true }))
      .then((n) => {
        if (n > 0) log.info({ signatures: n }, 'watching transactions another process left without a final entry');
      })
      .catch((e: unknown) => log.warn({ err: errorMessage(e) }, 'the look for orphaned transactions failed'));
  }, config.timings.orphan_sweep_ms);
  sweepTimer.unref();
  let running = 0;

  const done = (tool: 'check' | 'sign', report: Report, started: number): Report => {
    deps.onReport?.(tool, report, performance.now() - started);
    return report;
  };

  /**
   * A sign a cap refused is news for the operators' hooks: written to the outbox without the sign waiting for it,
   * at most one a minute per key (refusalThrottle).
   */
  const refusals = refusalThrottle();
  const signed = (input: SignInput, report: Report, started: number): Report => {
    if (report.outcome === 'refused' && report.failed_check === 'limits') {
      const now = Date.now();
      const { send, heldBack } = refusals.take(report.key ?? '', now);
      const by = principalLabel(input.principal);
      if (send) void notifier.emit(signRefusedByCap(report, by, Math.floor(now / 1000), heldBack));
    }
    return done('sign', report, started);
  };

  /** Settles the key for a parsed transaction payload; a key the principal may not use ends here, before any I/O. */
  const begin = (input: CheckInput, payload: Payload): StepWith<Begun> => {
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
  };

  const explorer = (signature: string): string | null =>
    config.cluster.explorer ? `${config.cluster.explorer}${signature}` : null;

  async function check(input: CheckInput): Promise<Report> {
    const started = performance.now();
    const payload = parseRequestPayload(input.payload);
    if (payload.version === 'message') return done('check', await messages.check(input, payload), started);
    const begun = begin(input, payload);
    if (!begun.ok) return done('check', begun.report, started);
    const { key, source, report } = begun;
    const checked = await preflight(preflightDeps, { mode: 'check', key, source, report, signal: input.signal });
    if (!checked.ok) return done('check', checked.report, started);
    if (checked.prepared.foreignFeePayer !== null) report.warnings.push(foreignFeePayerNote(checked.prepared));
    const pricing = pricingFor(key, config.prices);
    const figures = await simulate(chain, source.unsigned(checked.prepared), key, 'check', priceReads(pricing));
    // The same judgement sign makes on the same figures, so check's outcome is what sign would do.
    const judged = judgeSimulation(key, report, figures, {
      usage: checked.usageKnown ? checked.usage : null,
      usd: spendValue(pricing, figures),
      credential: credentialSpendCheck(input.principal),
    });
    if (figures.sim.err === null) report.logs = figures.sim.logs;
    if (!judged.ok) return done('check', judged.report, started);
    if (checked.usageKnown) report.checks.push('cap');
    if (report.would_need_approval) {
      report.detail = `key "${key.name}" needs ${approvalNeeded(key)} to sign this (sa-forge-signer approvals approve ID)`;
    }
    return done('check', report, started);
  }

  /**
   * The sign flow. It holds the key's lock only inside the cap gate (passGate), so the checks, the simulation,
   * an operator's approval and the confirmation of one sign never hold up another sign of the same key.
   * `sent` tells the final entry whether the transaction may be on chain; `watched` that the watcher writes the
   * final entry (sign_only, once the intent is durable).
   */
  async function signFlow(
    input: SignInput,
    mode: SignMode,
    begun: Begun,
    rec: SignRecord,
    progress: (p: SignProgress) => void,
  ): Promise<{ report: Report; sent: boolean; watched: boolean }> {
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
    const pricing = pricingFor(key, config.prices);
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
    await checkLanded(tripwireDeps, {
      keyName: key.name,
      keyPubkey: key.pubkey,
      report,
      reservation: gate.reservation,
      meta: landed,
    });
    return { report, sent: true, watched: false };
  }

  async function sign(input: SignInput): Promise<Report> {
    const started = performance.now();
    const mode = signMode(input.mode);
    const parsed = parseRequestPayload(input.payload);
    if (parsed.version === 'message') {
      // A message is signed, never sent: the mode does not apply. It counts as running for the drain.
      running++;
      try {
        return signed(input, await messages.sign(input, parsed), started);
      } finally {
        running--;
      }
    }
    const begun = begin(input, parsed);
    // A key the token may not use is refused here: nothing written under its name.
    if (!begun.ok) return done('sign', begun.report, started);
    const { key, payload, source } = begun;
    const rec: SignRecord = {
      key,
      payloadHash: payload.hash,
      summary: payload.summary,
      programs: source.programs,
      intent: input.intent ?? null,
      credential: credentialNote(input.principal),
    };
    const progress = input.onProgress ?? (() => {});
    running++;
    try {
      const { report, sent, watched } = await signFlow(input, mode, begun, rec, progress);
      // A sign's own final entry needs no lock: only this sign writes it, and a usage read counts either the
      // intent's reservation (before the final is appended) or the final figure (after), never both.
      if (!watched) await writeFinal({ ledger, log }, rec, report, sent);
      return signed(input, report, started);
    } finally {
      running--;
    }
  }

  return {
    check,
    sign,

    keyShow: async ({ key, principal }) =>
      Promise.all(
        access.select(principal, key).map((k) => keyView({ chain, ledger, halts, cluster: config.cluster, keys }, k)),
      ),

    // Async, so a key the principal may not use is a rejected promise like every other refusal of the engine.
    async halt(input) {
      const keys = access.select(input.principal, input.key);
      return haltKeys(halts, keys, input.reason, principalLabel(input.principal));
    },

    resume: (keyName, by = 'operator') => halts.resume(access.byName(keyName).name, by),

    policyNow: (approval) =>
      approvalPolicyNow(
        access.all,
        { usage: (key) => keyUsage(ledger, key), halt: (name) => halts.current(name) },
        approval,
      ),

    verifyKeys: () => keys.verify(),

    async ready() {
      const detail: Record<string, string> = {};
      const [ledgerUp, genesis] = await Promise.allSettled([ledger.ping(), chain.getGenesisHash()]);
      detail.ledger = ledgerUp.status === 'fulfilled' ? 'ok' : errorMessage(ledgerUp.reason);
      // Ready all the same: the warning is what a failover could lose, for the operator to fix (docs/ledger.md).
      const ledgerWarning = ledger.warning?.() ?? null;
      if (ledgerWarning !== null) detail.ledger_warning = ledgerWarning;
      if (genesis.status === 'rejected') detail.chain = errorMessage(genesis.reason);
      else if (config.cluster.genesis_hash !== null && genesis.value !== config.cluster.genesis_hash) {
        detail.chain = `RPC genesis hash ${genesis.value} is not ${config.cluster.name}`;
      } else detail.chain = 'ok';
      const problems = await keys.health();
      detail.keys = problems.length === 0 ? 'ok' : problems.map((p) => `${p.key}: ${p.message}`).join('; ');
      return { ok: detail.ledger === 'ok' && detail.chain === 'ok' && detail.keys === 'ok', detail };
    },

    inFlight: () => running,

    reconcileTreasuries: () => treasuries.reconcile(),

    async close() {
      if (reconcileTimer !== null) clearInterval(reconcileTimer);
      clearInterval(sweepTimer);
      await resumed;
      await sweeping;
      await watcher.close();
      notices?.close();
      halts.close();
      await notifier.flush();
      await ledger.close();
      await keys.close();
    },
  };
}

function signMode(raw: unknown): SignMode {
  if (raw === undefined || raw === null || raw === 'send') return 'send';
  if (raw === 'sign_only') return 'sign_only';
  throw new SignerError('request_invalid', 'mode must be "send" or "sign_only"');
}

/** check's note on a transaction another account pays the fee for: what sign will and will not do with it. */
function foreignFeePayerNote(prepared: PreparedTransaction): string {
  return `the fee payer ${prepared.foreignFeePayer ?? ''} is not the key: sign it with mode "sign_only" (the key's slot only); the fee payer signs and sends it`;
}
