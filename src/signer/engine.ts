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
 * check is flow/transaction-check.ts, sign flow/sign-transaction.ts (messages: message/flow.ts); this file builds
 * what they share, and what runs beside them (engine-background.ts), and writes a sent sign's final entry.
 * It knows nothing of HTTP or MCP; every entrypoint calls it through SignerEngine. docs/policy.md describes the
 * checks, the report and the outcomes.
 */
import { votersOf } from '../ledger/records';
import { nowSeconds } from '../util/time';
import { SignerError } from '../util/errors';
import { signatureNoticesFor } from '../rpc/signature-notices';
import { signRefusedByCap } from '../notify/events';
import { createOutbox } from '../notify/outbox';
import { refusalThrottle } from '../notify/throttle';
import { startBackground } from './engine-background';
import { silentLogger, type EngineDeps } from './engine-deps';
import type { SignRecord } from './flow/audit';
import { writeFinal } from './flow/audit';
import { begin } from './flow/begin';
import { keyUsage } from './flow/preflight';
import { approvalPolicyNow } from './flow/policy-now';
import { signTransaction, type SignFlowDeps } from './flow/sign-transaction';
import { checkTransaction } from './flow/transaction-check';
import { budgetSpent, budgetSpentUsd, remainingUsdBudget } from './policy/rules/credential-budget';
import { formatUsd } from '../util/usd-amounts';
import { createHaltBook } from './halts';
import { treasuryStatus, type TreasuryStatus } from '../treasury/status';
import { haltKeys } from './halt-keys';
import { heldHaltsFile } from './held-halts-file';
import { fixedPolicy, liveAccess, liveKeySet, policyFor } from './policy';
import { keyView } from './key-view';
import { createMessageFlow } from './message/flow';
import { parseRequestPayload } from './message/request';
import { engineReady } from './readiness';
import type { Report } from './report';
import type { CheckInput, SignerEngine, SignInput, SignMode } from './types';
import { credentialBudgets, credentialNote, principalLabel } from './types';

export type { EngineDeps, EngineLogger } from './engine-deps';

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
  const background = startBackground({
    config,
    chain,
    ledger,
    halts,
    notifier,
    log,
    policy,
    tripwire: tripwireDeps,
    notices,
  });
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

  const explorer = (signature: string): string | null =>
    config.cluster.explorer ? `${config.cluster.explorer}${signature}` : null;

  const prices = () => policy().prices;
  const checkDeps = { prices, chain, ledger, preflight: preflightDeps };
  async function check(input: CheckInput): Promise<Report> {
    const started = performance.now();
    const payload = parseRequestPayload(input.payload);
    if (payload.version === 'message') return done('check', await messages.check(input, payload), started);
    const begun = begin(access, chain, input, payload);
    if (!begun.ok) return done('check', begun.report, started);
    return done('check', await checkTransaction(checkDeps, input, begun), started);
  }

  const signDeps: SignFlowDeps = {
    config,
    prices,
    chain,
    ledger,
    halts,
    log,
    keys,
    access,
    preflight: preflightDeps,
    approval: approvalDeps,
    send: sendDeps,
    tripwire: tripwireDeps,
    watcher: background.watcher,
    explorer,
  };

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
    const begun = begin(access, chain, input, parsed);
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
      const { report, sent, watched, landedUsd } = await signTransaction(signDeps, input, mode, begun, rec, progress);
      // A sign's own final entry needs no lock: only this sign writes it, and a usage read counts either the
      // intent's reservation (before the final is appended) or the final figure (after), never both.
      if (!watched) await writeFinal({ ledger, log }, rec, report, sent, landedUsd ?? null);
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

    budgetsShow: async (principal) => {
      const now = nowSeconds();
      return Promise.all(
        credentialBudgets(principal).map(async (b) => {
          const fact = { ...b, usage: await ledger.blockUsage(b.revocation_id, now) };
          const spent = budgetSpent(fact);
          const usdLeft = remainingUsdBudget(fact);
          return {
            block: b.block,
            revocation_id: b.revocation_id,
            per_day_lamports: b.per_day_lamports,
            spent_or_reserved_24h: spent,
            remaining_lamports: b.per_day_lamports === null ? null : Math.max(0, b.per_day_lamports - spent),
            per_day_usd: b.per_day_usd_micros === null ? null : formatUsd(b.per_day_usd_micros),
            spent_or_reserved_usd_24h: b.per_day_usd_micros === null ? null : formatUsd(budgetSpentUsd(fact)),
            remaining_usd: usdLeft === null ? null : formatUsd(usdLeft),
          };
        }),
      );
    },

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

    ready: () => engineReady({ ledger, chain, cluster: config.cluster, keys }),

    inFlight: () => running,

    reconcileTreasuries: () => background.treasuries.reconcile(),

    async treasuryShow() {
      const shown = await Promise.all(policy().keys.map((k) => treasuryStatus(chain, k, config.prices)));
      return shown.filter((t): t is TreasuryStatus => t !== null);
    },

    async close() {
      await background.close();
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
