/**
 * check and sign for a message payload (docs/payloads.md, "Messages"). Nothing touches the chain: a message is
 * signed, never sent. The order:
 *
 *   key (token, `signer`) → the key's `sign_messages` switch → approval deny → the message check (no transaction
 *   in disguise, the off-chain format's rules) → halted → rate limit → [sign: operator approval for a `confirm`
 *   key, then under the key's lock: halt and rate again, sign, write the `sign-message` entry; unlock and return
 *   the signature]
 *
 * A `confirm` key asks its operator for every message, whatever `approve_above_lamports` says: a message moves no
 * lamports, yet its signature can log in or authorise anything that trusts the key. Signed messages count
 * against `rate_limit_per_minute` like transactions; they spend nothing, so the daily cap does not apply.
 */
import type { KeyConfig } from '../../config/types';
import type { HaltRecord, Ledger, Usage } from '../../ledger/types';
import { encodeBase58 } from '../../util/base58';
import { SignerError, errorMessage } from '../../util/errors';
import type { Refusal } from '../refusals';
import type { EngineLogger } from '../engine-deps';
import { approvalNeeded, approvalNote, awaitApproval, type ApprovalDeps } from '../flow/approval';
import { keyUsage } from '../flow/preflight';
import { refuse, type Step } from '../flow/step';
import { reportVerdict, verdictStep } from '../flow/verdict-report';
import { decide } from '../policy/decide';
import { credentialMessageRefusal } from '../policy/rules/credential';
import { denyRefusal } from '../policy/rules/key';
import { messageKeyNowRefusal } from '../policy/rules/key-now';
import { messagesOffRefusal, messageSignerRefusal } from '../policy/rules/message-key';
import type { HaltBook } from '../halts';
import type { KeyAccess } from '../key-access';
import type { KeySet } from '../../keys/key-set';
import { emptyReport, type Report } from '../report';
import { credentialNote, credentialSpendCheck, type CheckInput, type SignInput } from '../types';
import { messageEntry } from './audit-entry';
import { readMessage, type MessageView } from './content';
import { signedEnvelope } from './offchain';
import type { MessagePayload } from './payload';

export interface MessageFlowDeps {
  access: KeyAccess;
  keys: KeySet;
  halts: HaltBook;
  ledger: Ledger;
  approval: ApprovalDeps;
  log: EngineLogger;
}

export interface MessageFlow {
  check(input: CheckInput, payload: MessagePayload): Promise<Report>;
  sign(input: SignInput, payload: MessagePayload): Promise<Report>;
}

/** The checks that need neither ledger nor lock passed (`key` set), or one refused (`key` set once chosen). */
type Begun =
  | { ok: true; key: KeyConfig; report: Report; view: MessageView }
  | { ok: false; key: KeyConfig | null; report: Report };

export function createMessageFlow(deps: MessageFlowDeps): MessageFlow {
  const { access, keys, halts, ledger, log } = deps;

  const begin = (input: CheckInput, payload: MessagePayload): Begun => {
    if ((input.key ?? null) === null && payload.signer === null) {
      throw new SignerError(
        'payload_invalid',
        "a message payload has no fee payer to choose the key by: pass `key`, or the key's pubkey as the payload's `signer`",
      );
    }
    const choice = access.forPayload(input.principal, input.key, payload.signer ?? '');
    const report = emptyReport({
      key: choice.ok ? choice.key.name : choice.name,
      summary: payload.summary,
      warnings: [...payload.warnings],
      payload_hash: payload.hash,
    });
    if (!choice.ok) return { ok: false, key: null, report: refuse(report, choice.refusal) };
    const { key } = choice;
    const refused = (r: Refusal): Begun => ({ ok: false, key, report: refuse(report, r) });
    const keyRefusal =
      messageSignerRefusal(key, payload.signer) ?? messagesOffRefusal(key, 'before') ?? denyRefusal(key);
    if (keyRefusal) return refused(keyRefusal);
    const read = readMessage(payload);
    const content = decide(key, { at: 'content', ...read.facts });
    if (content.outcome === 'refused') return refused(content.refusal);
    // The rule refuses every reading without a view (a transaction look-alike, a malformed off-chain message).
    if (read.view === null) throw new SignerError('internal', 'a message the policy allowed has no view');
    reportVerdict(report, content);
    return { ok: true, key, report, view: read.view };
  };

  /** Halt and rate. `check` previews with a warning when the ledger cannot be read; `sign` fails closed. */
  const ledgerChecks = async (key: KeyConfig, report: Report, mode: 'check' | 'sign'): Promise<Step> => {
    let halt: HaltRecord | null;
    let usage: Usage | null = null;
    try {
      [halt, usage] = await Promise.all([halts.current(key.name), keyUsage(ledger, key)]);
    } catch (e) {
      if (mode === 'sign') throw e;
      halt = halts.held(key.name);
      report.warnings.push(`the ledger could not be read (${errorMessage(e)}): halts and limits were not previewed`);
    }
    return verdictStep(report, decide(key, { at: 'message', halt, usage }));
  };

  const needsOperator = (key: KeyConfig): boolean => key.approval === 'confirm';

  async function check(input: CheckInput, payload: MessagePayload): Promise<Report> {
    const begun = begin(input, payload);
    if (!begun.ok) return begun.report;
    const { key, report } = begun;
    const checked = await ledgerChecks(key, report, 'check');
    if (!checked.ok) return checked.report;
    report.would_need_approval = needsOperator(key);
    if (report.would_need_approval) {
      report.detail = `key "${key.name}" needs ${approvalNeeded(key)} to sign this message (sa-forge-signer approvals approve ID)`;
    }
    return report;
  }

  /** Halt and rate, then the operator's approval for a `confirm` key, holding no lock while the operator decides. */
  async function signMessage(
    input: SignInput,
    payload: MessagePayload,
    begun: Extract<Begun, { ok: true }>,
  ): Promise<Report> {
    const { key, report, view } = begun;
    const checked = await ledgerChecks(key, report, 'sign');
    if (!checked.ok) return checked.report;
    report.would_need_approval = needsOperator(key);
    let approval: string | null = null;
    if (report.would_need_approval) {
      const approved = await awaitApproval(deps.approval, {
        principal: input.principal,
        key,
        summary: payload.summary,
        payloadHash: payload.hash,
        report,
        progress: input.onProgress ?? (() => {}),
        signal: input.signal,
        message: view.text,
        messageDescription: view.describe,
      });
      if (!approved.ok) return approved.report;
      // A reload while the operators decided applies to what they decided: the key must still sign messages.
      const current = deps.access.all.find((k) => k.name === key.name) ?? null;
      const now = messageKeyNowRefusal(key, current);
      if (now) return refuse(report, now);
      // The credential the request came with is judged again now (a message moves nothing): one that expired while
      // the operators decided signs nothing.
      const credential = credentialMessageRefusal(credentialSpendCheck(input.principal)?.check, key);
      if (credential) return refuse(report, credential);
      approval = approvalNote(approved.approval);
    }
    report.checks.push('approval');
    input.onProgress?.({ stage: 'lock' });
    const lock = await ledger.lockKey(key.name, input.signal);
    try {
      return await signLocked(input, payload, begun, approval);
    } finally {
      await lock
        .release()
        .catch((e: unknown) => log.error({ key: key.name, err: errorMessage(e) }, 'releasing a key lock failed'));
    }
  }

  /** Under the key's lock, so two signs never pass the rate limit on the same count. */
  async function signLocked(
    input: SignInput,
    payload: MessagePayload,
    begun: Extract<Begun, { ok: true }>,
    approval: string | null,
  ): Promise<Report> {
    const { key, report, view } = begun;
    // A halt pulled meanwhile still stops the signature, and other signs of the key may have filled the minute since
    // the first look (or while the operator decided).
    const [halt, usage] = await Promise.all([halts.current(key.name), keyUsage(ledger, key)]);
    const verdict = decide(key, { at: 'message', halt, usage });
    if (verdict.outcome === 'refused') return refuse(report, verdict.refusal);
    if (input.signal?.aborted)
      throw new SignerError('cancelled', 'the request was cancelled before anything was signed');

    const signature = await (await keys.signerFor(key)).sign(payload.bytes);
    report.outcome = 'signed';
    report.signature = encodeBase58(signature);
    if (payload.format === 'offchain') report.signed_message = signedEnvelope(payload.bytes, key.pubkey, signature);
    report.detail = `signed ${view.describe}; a message is never sent to the chain`;
    // Durable before the signature leaves: if this write fails the caller gets the error, not the signature.
    await ledger.appendFenced(
      messageEntry({
        key,
        payload,
        intent: input.intent ?? null,
        view,
        report,
        approval,
        credential: credentialNote(input.principal),
      }),
    );
    return report;
  }

  async function sign(input: SignInput, payload: MessagePayload): Promise<Report> {
    const begun = begin(input, payload);
    const intent = input.intent ?? null;
    const credential = credentialNote(input.principal);
    if (!begun.ok) {
      // A key the token may not use is refused with nothing written under its name, as for transactions.
      if (begun.key)
        await ledger.append(
          messageEntry({ key: begun.key, payload, intent, view: null, report: begun.report, credential }),
        );
      return begun.report;
    }
    const report = await signMessage(input, payload, begun);
    if (report.outcome !== 'signed') {
      await ledger.append(messageEntry({ key: begun.key, payload, intent, view: begun.view, report, credential }));
    }
    return report;
  }

  return { check, sign };
}
