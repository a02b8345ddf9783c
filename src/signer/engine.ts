/**
 * The signer engine: payload → compiled message → policy checks → simulate → approve → cap gate →
 * durable intent → send → confirm → final audit entry (domain.md §3.3, DESIGN.md §5).
 * It knows nothing of HTTP or MCP; every entrypoint calls it through SignerEngine.
 */
import type { ChainClient, SimulationResult } from '../chain/types';
import type { KeyConfig, SignerConfig } from '../config/types';
import type { Signer } from '../keys/keypair';
import { loadKeyFile } from '../keys/keyfile';
import type { KeyUsage } from '../ledger/limits';
import type { AuditEntryInput, HaltRecord, Ledger } from '../ledger/types';
import { SignerError, errorMessage } from '../util/errors';
import { nowSeconds, sleep } from '../util/time';
import { ataOwnerRefusal, ataOwnersToVerify, programError, structuralRefusal, STRUCTURAL_CHECKS } from './checks';
import type { Refusal } from './checks';
import {
  compileLegacyMessage,
  requiredSigners,
  serializeTransaction,
  signatureToBase58,
  type CompiledMessage,
} from './compile';
import { KeyTable, mayUse, notAuthorizedMessage } from './keys';
import { parsePayload, type Payload } from './payload';
import { emptyReport, type Report } from './report';
import type { CheckInput, HaltResult, KeyView, Principal, SignerEngine, SignInput, SignProgress } from './types';
import { principalLabel } from './types';

export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: EngineLogger = { info() {}, warn() {}, error() {} };

export interface EngineDeps {
  config: SignerConfig;
  chain: ChainClient;
  ledger: Ledger;
  logger?: EngineLogger;
  /** Observes every finished check/sign (metrics). */
  onReport?: (tool: 'check' | 'sign', report: Report, durationMs: number) => void;
}

/** A transaction built for one blockhash: what is simulated is exactly what is sent. */
interface Built {
  msg: CompiledMessage;
  wire: Uint8Array;
  wireBase64: string;
  signature: string | null; // the fee payer's, when signed
  lastValidBlockHeight: number;
}

interface Latest {
  blockhash: string;
  lastValidBlockHeight: number;
}

interface Figures {
  sim: SimulationResult;
  fee: number | null;
  balanceChange: number | null;
}

/** A report ends the flow early: thrown inside a flow, caught at its top. */
class Finished {
  constructor(readonly report: Report) {}
}

export class Engine implements SignerEngine {
  private readonly keys: KeyTable;
  private readonly log: EngineLogger;
  private readonly cfg: SignerConfig;
  private readonly chain: ChainClient;
  private readonly ledger: Ledger;
  /** Halts the ledger could not record: this process still honours them (DESIGN §5). */
  private readonly memoryHalts = new Map<string, HaltRecord>();
  private running = 0;
  private readonly signers = new Map<string, Signer>();
  /** key_show's views: one look-up shared by concurrent callers, kept `key_show_cache_ms`. */
  private readonly views = new Map<string, { at: number; value: Promise<KeyView>; settled: KeyView | null }>();

  constructor(private readonly deps: EngineDeps) {
    this.cfg = deps.config;
    this.chain = deps.chain;
    this.ledger = deps.ledger;
    this.keys = new KeyTable(deps.config.keys);
    this.log = deps.logger ?? silentLogger;
  }

  inFlight(): number {
    return this.running;
  }

  async close(): Promise<void> {
    await this.ledger.close();
  }

  // ---------------------------------------------------------------- check

  async check(input: CheckInput): Promise<Report> {
    const started = performance.now();
    const { payload, key, report } = this.begin(input);
    try {
      const { latest } = await this.preflight('check', input.principal, payload, key, report, input.signal);
      const built = this.buildFor(key, payload, null, latest);
      const figures = await this.simulate(built, key, 'check');
      this.applyFigures(report, figures);
      if (figures.sim.err !== null) throw new Finished(this.simulationFailed(report, figures.sim, null));
      report.checks.push('simulation');
      report.logs = figures.sim.logs;
      if (key.approval === 'confirm') {
        report.detail = `key "${key.name}" needs an operator's approval to sign (sa-forge-signer approvals approve ID)`;
      }
      return this.done('check', report, started);
    } catch (e) {
      if (e instanceof Finished) return this.done('check', e.report, started);
      throw e;
    }
  }

  // ---------------------------------------------------------------- sign

  async sign(input: SignInput): Promise<Report> {
    const started = performance.now();
    const { payload, key, report } = this.begin(input);
    const intent = input.intent ?? null;
    const progress = input.onProgress ?? (() => {});

    // An unauthorised token neither takes the key's lock nor writes under the key's name.
    if (!mayUse(input.principal, key.name)) {
      return this.done(
        'sign',
        refuse(report, { check: 'authorized', message: notAuthorizedMessage(key.name) }),
        started,
      );
    }
    this.running++;
    try {
      progress({ stage: 'lock' });
      const lock = await this.ledger.lockKey(key.name, input.signal);
      try {
        let final: Report;
        let sent = false;
        try {
          final = await this.signLocked(input, payload, key, report, intent, progress, () => {
            sent = true;
          });
        } catch (e) {
          if (!(e instanceof Finished)) throw e;
          final = e.report;
        }
        await this.writeFinal(final, payload, key, intent, sent);
        this.views.delete(key.name);
        return this.done('sign', final, started);
      } finally {
        await lock
          .release()
          .catch((e: unknown) =>
            this.log.error({ key: key.name, err: errorMessage(e) }, 'releasing a key lock failed'),
          );
      }
    } finally {
      this.running--;
    }
  }

  private async signLocked(
    input: SignInput,
    payload: Payload,
    key: KeyConfig,
    report: Report,
    intent: string | null,
    progress: (p: SignProgress) => void,
    markSent: () => void,
  ): Promise<Report> {
    const checked = await this.preflight('sign', input.principal, payload, key, report, input.signal);
    let usage = checked.usage;
    const signer = this.signerFor(key);

    let built = this.buildFor(key, payload, signer, checked.latest);
    let figures = await this.simulate(built, key, 'sign');
    if (figures.sim.err === 'BlockhashNotFound') {
      // The blockhash expired between fetch and simulation: rebuild and re-sign once.
      built = this.buildFor(key, payload, signer, await this.chain.getLatestBlockhash());
      figures = await this.simulate(built, key, 'sign');
    }
    this.applyFigures(report, figures);
    if (figures.sim.err !== null) return this.simulationFailed(report, figures.sim, null);
    report.checks.push('simulation');

    if (key.approval === 'confirm') {
      await this.awaitApproval(input.principal, payload, key, report, progress);
      // Approval can outlast the blockhash: send exactly what is simulated now.
      built = this.buildFor(key, payload, signer, await this.chain.getLatestBlockhash());
      figures = await this.simulate(built, key, 'sign');
      this.applyFigures(report, figures);
      if (figures.sim.err !== null) return this.simulationFailed(report, figures.sim, 'after approval');
      usage = await this.usage(key);
    }
    report.checks.push('approval');

    const reservation = this.capGate(key, report, usage);
    report.checks.push('cap');

    const halt = await this.haltOf(key.name);
    if (halt) return refuse(report, haltRefusal(key.name, halt));
    if (input.signal?.aborted) throw new SignerError('cancelled', 'the request was cancelled before anything was sent');

    // The intent is durable before the transaction leaves: if it cannot be written, nothing is sent.
    report.signature = built.signature;
    report.explorer = this.explorer(built.signature);
    await this.ledger.appendFenced(
      this.entry(payload, key, intent, {
        command: 'sign-intent',
        outcome: 'pending',
        detail: null,
        signature: built.signature,
        slot: null,
        balance_change: -reservation,
      }),
    );
    markSent();
    progress({ stage: 'sent', signature: built.signature! });
    await this.sendAndConfirm(built, report, progress);
    return report;
  }

  // ---------------------------------------------------------------- steps

  private begin(input: CheckInput): { payload: Payload; key: KeyConfig; report: Report } {
    const payload = parsePayload(input.payload);
    const key = this.keys.choose(input.key, payload.feePayer);
    const report = emptyReport({
      key: key.name,
      summary: payload.summary,
      warnings: [...payload.warnings],
      payload_hash: payload.hash,
    });
    return { payload, key, report };
  }

  /**
   * Steps A, halted, P1, P2 and 1–10 of domain.md §2.0. Returns the key's usage and the blockhash the
   * checks compiled against, which the first build reuses.
   */
  private async preflight(
    mode: 'check' | 'sign',
    principal: Principal,
    payload: Payload,
    key: KeyConfig,
    report: Report,
    signal: AbortSignal | undefined,
  ): Promise<{ usage: KeyUsage; latest: Latest }> {
    if (!mayUse(principal, key.name))
      throw new Finished(refuse(report, { check: 'authorized', message: notAuthorizedMessage(key.name) }));
    if (payload.feePayer !== key.pubkey) {
      throw new Finished(
        refuse(report, {
          check: 'fee_payer',
          message: `payload fee payer ${payload.feePayer} is not key "${key.name}" (${key.pubkey})`,
        }),
      );
    }
    if (key.approval === 'deny')
      throw new Finished(refuse(report, { check: 'approval', message: `key "${key.name}" is set to deny` }));

    // check keeps working when the ledger is down; sign fails closed.
    let halt: HaltRecord | null = null;
    let usage: KeyUsage | null = null;
    try {
      [halt, usage] = await Promise.all([this.haltOf(key.name), this.usage(key)]);
    } catch (e) {
      if (mode === 'sign') throw e;
      halt = this.memoryHalts.get(key.name) ?? null;
      report.warnings.push(`the ledger could not be read (${errorMessage(e)}): halts and limits were not previewed`);
    }
    if (halt) throw new Finished(refuse(report, haltRefusal(key.name, halt)));

    // One round trip: the blockhash is only used once the genesis has been checked.
    const [genesis, latest] = await Promise.all([this.chain.getGenesisHash(), this.chain.getLatestBlockhash()]);
    if (this.cfg.cluster.genesis_hash !== null && genesis !== this.cfg.cluster.genesis_hash) {
      throw new Finished(
        refuse(report, { check: 'chain', message: `RPC genesis hash ${genesis} is not ${this.cfg.cluster.name}` }),
      );
    }
    report.checks.push('chain');
    if (signal?.aborted) throw new SignerError('cancelled', 'the request was cancelled');

    const msg = compileLegacyMessage(payload.feePayer, payload.instructions, latest.blockhash);
    const subject = {
      key,
      cluster: this.cfg.cluster,
      msg,
      partialSigners: payload.partialSigners.map((s) => s.pubkey),
    };
    const structural = structuralRefusal(subject);
    if (structural) throw new Finished(refuse(report, structural));
    report.checks.push(...STRUCTURAL_CHECKS);

    if (subject.partialSigners.length > 0) {
      const existing = await this.chain.getMultipleAccounts(subject.partialSigners);
      const taken = subject.partialSigners.find((_, i) => existing[i] !== null);
      if (taken)
        throw new Finished(
          refuse(report, { check: 'new_accounts', message: `partial signer ${taken} already exists on-chain` }),
        );
    }
    report.checks.push('new_accounts');

    const owners = ataOwnersToVerify(subject);
    if (!Array.isArray(owners)) throw new Finished(refuse(report, owners));
    if (owners.length > 0) {
      const accounts = await this.chain.getMultipleAccounts(owners);
      const games = new Set(this.cfg.cluster.game_programs);
      const foreign = owners.find((_, i) => !accounts[i] || !games.has(accounts[i]!.owner));
      if (foreign) throw new Finished(refuse(report, ataOwnerRefusal(foreign)));
    }
    report.checks.push('ata_owners');

    if (usage) {
      const early = limitsRefusal(key, usage, null);
      if (early) throw new Finished(refuse(report, early));
      report.checks.push('limits');
    }
    return { usage: usage ?? { signsLastMinute: 0, spent24h: 0 }, latest };
  }

  /** Compiles for a blockhash and (for sign) signs with the key, then every partial signer. */
  private buildFor(
    key: KeyConfig,
    payload: Payload,
    signer: Signer | null,
    { blockhash, lastValidBlockHeight }: Latest,
  ): Built {
    const msg = compileLegacyMessage(payload.feePayer, payload.instructions, blockhash);
    const signatures = new Map<string, Uint8Array>();
    if (signer) {
      signatures.set(key.pubkey, signer.sign(msg.bytes));
      for (const partial of payload.partialSigners) signatures.set(partial.pubkey, partial.sign(msg.bytes));
    }
    const wire = serializeTransaction(msg, signatures);
    const feePayerSig = signatures.get(requiredSigners(msg)[0]!);
    return {
      msg,
      wire,
      wireBase64: Buffer.from(wire).toString('base64'),
      signature: feePayerSig ? signatureToBase58(feePayerSig) : null,
      lastValidBlockHeight,
    };
  }

  private async simulate(built: Built, key: KeyConfig, mode: 'check' | 'sign'): Promise<Figures> {
    const messageBase64 = Buffer.from(built.msg.bytes).toString('base64');
    const [pre, sim, fee] = await Promise.all([
      this.chain.getBalance(key.pubkey),
      this.chain.simulateTransaction(built.wireBase64, {
        sigVerify: mode === 'sign',
        replaceRecentBlockhash: mode === 'check',
        accounts: [key.pubkey],
      }),
      // A fee the RPC cannot quote stays unknown: it is never assumed to be 0.
      this.chain.getFeeForMessage(messageBase64).catch(() => null),
    ]);
    const post = sim.accounts[0]?.lamports;
    return { sim, fee, balanceChange: post === undefined ? null : post - pre };
  }

  private applyFigures(report: Report, f: Figures): void {
    report.compute_units = f.sim.unitsConsumed;
    report.fee = f.fee;
    report.balance_change = f.balanceChange;
  }

  private simulationFailed(report: Report, sim: SimulationResult, prefix: string | null): Report {
    report.outcome = 'simulation_failed';
    report.program_error = programError(sim.logs);
    const cause = report.program_error ?? `simulation error ${JSON.stringify(sim.err)}`;
    report.detail = prefix ? `${prefix}: ${cause}` : cause;
    report.error = sim.err;
    report.logs = sim.logs;
    return report;
  }

  private async awaitApproval(
    principal: Principal,
    payload: Payload,
    key: KeyConfig,
    report: Report,
    progress: (p: SignProgress) => void,
  ): Promise<void> {
    const now = nowSeconds();
    const timeout = this.cfg.timings.approval_timeout_ms;
    const record = await this.ledger.createApproval({
      key: key.name,
      summary: payload.summary,
      payload_hash: payload.hash,
      balance_change: report.balance_change,
      fee: report.fee,
      compute_units: report.compute_units,
      requested_by: principalLabel(principal),
      ts: now,
      expires_at: now + Math.ceil(timeout / 1000),
    });
    progress({ stage: 'approval', approval_id: record.id, expires_at: record.expires_at });
    this.log.info(
      { key: key.name, approval: record.id },
      'waiting for an operator: sa-forge-signer approvals approve|reject ID',
    );
    const deadline = Date.now() + timeout;
    for (;;) {
      const current = await this.ledger.getApproval(record.id);
      if (current?.status === 'approved') return;
      if (current?.status === 'rejected')
        throw new Finished(
          refuse(report, {
            check: 'approval',
            message: `not approved: rejected by ${current.decided_by ?? 'an operator'}`,
          }),
        );
      if (Date.now() >= deadline) {
        await this.ledger.decideApproval(record.id, 'expired', 'signer', nowSeconds()).catch(() => undefined);
        const last = await this.ledger.getApproval(record.id);
        if (last?.status === 'approved') return; // approved in the last instant
        throw new Finished(
          refuse(report, {
            check: 'approval',
            message: `not approved: no operator approved request ${record.id} within ${seconds(timeout)} s`,
          }),
        );
      }
      await sleep(Math.min(this.cfg.timings.approval_poll_ms, Math.max(1, deadline - Date.now())));
    }
  }

  /** The binding cap check (domain.md §3.4) against the exact transaction about to be sent. */
  private capGate(key: KeyConfig, report: Report, usage: KeyUsage): number {
    if (report.balance_change === null || report.fee === null) {
      throw new Finished(
        refuse(report, {
          check: 'limits',
          message:
            "the simulation did not report this key's balance, or the RPC gave no fee estimate, so the spend cannot be bounded",
        }),
      );
    }
    // The simulated change usually includes the fee already: adding it again over-reserves by one fee, never under.
    const reservation = spend(report.balance_change) + report.fee;
    const refusal = limitsRefusal(key, usage, reservation);
    if (refusal) throw new Finished(refuse(report, refusal));
    return reservation;
  }

  private async sendAndConfirm(built: Built, report: Report, progress: (p: SignProgress) => void): Promise<void> {
    const t = this.cfg.timings;
    const signature = built.signature!;
    const started = Date.now();
    const reconcile = 'look up the signature and check the on-chain state before retrying';
    let failures = 0;
    let lastError: string | null = null;
    const failed = (e: unknown): boolean => {
      failures++;
      lastError = errorMessage(e);
      report.detail = lastError;
      return failures >= t.max_rpc_failures;
    };

    try {
      await this.chain.sendTransaction(built.wireBase64);
    } catch (e) {
      report.detail = `send: ${errorMessage(e)}`;
    }

    report.balance_change = null;
    let outcome: { landed: true; slot: number; err: unknown } | { landed: false; detail: string } | null = null;
    for (let polls = 1; outcome === null; polls++) {
      await sleep(t.poll_interval_ms);
      // Status and finalized height in one round trip (the RPC client batches calls made together).
      const [statuses, height] = await Promise.allSettled([
        this.chain.getSignatureStatuses([signature], { searchTransactionHistory: false }),
        this.chain.getBlockHeight('finalized'),
      ]);
      const s = statuses.status === 'fulfilled' ? statuses.value[0] : null;
      const status = s?.confirmationStatus ?? null;
      if (s && isLanded(s.confirmationStatus)) outcome = { landed: true, slot: s.slot, err: s.err };
      else if (statuses.status === 'rejected' && failed(statuses.reason))
        outcome = { landed: false, detail: `${lastError}; ${reconcile}` };
      else if (height.status === 'rejected') {
        if (failed(height.reason)) outcome = { landed: false, detail: `${lastError}; ${reconcile}` };
      } else if (height.value > built.lastValidBlockHeight) {
        try {
          const [h] = await this.chain.getSignatureStatuses([signature], { searchTransactionHistory: true });
          outcome =
            h && isLanded(h.confirmationStatus)
              ? { landed: true, slot: h.slot, err: h.err }
              : {
                  landed: false,
                  detail: `blockhash expired (finalized height ${height.value} is past ${built.lastValidBlockHeight}) and the RPC reports no landed status; that does not prove it never landed: ${reconcile}`,
                };
        } catch (e) {
          if (failed(e)) outcome = { landed: false, detail: `${lastError}; ${reconcile}` };
        }
      }
      const elapsed = Date.now() - started;
      if (outcome === null && elapsed >= t.confirm_deadline_ms) {
        outcome = {
          landed: false,
          detail: `no proven outcome within ${seconds(t.confirm_deadline_ms)}s; ${reconcile}`,
        };
      }
      if (outcome === null && polls % t.rebroadcast_every === 0) {
        await this.chain.sendTransaction(built.wireBase64).catch(() => undefined);
      }
      progress({ stage: 'confirming', signature, polls, elapsed_ms: elapsed, status });
    }

    if (!outcome.landed) {
      report.outcome = 'unknown';
      report.detail = outcome.detail;
      return;
    }
    report.slot = outcome.slot;
    report.outcome = outcome.err === null || outcome.err === undefined ? 'confirmed' : 'failed';
    report.error = report.outcome === 'failed' ? outcome.err : null;
    if (report.outcome === 'confirmed') report.detail = null;
    await this.fetchMetadata(signature, report, started);
  }

  private async fetchMetadata(signature: string, report: Report, sendStarted: number): Promise<void> {
    const t = this.cfg.timings;
    for (let attempt = 0; attempt < t.metadata_attempts; attempt++) {
      if (attempt > 0) {
        if (Date.now() - sendStarted + t.poll_interval_ms > t.confirm_deadline_ms) return;
        await sleep(t.poll_interval_ms);
      }
      const meta = await this.chain.getTransaction(signature).catch(() => null);
      if (!meta) continue;
      if (meta.preBalance0 !== null && meta.postBalance0 !== null)
        report.balance_change = meta.postBalance0 - meta.preBalance0;
      if (meta.fee !== null) report.fee = meta.fee;
      report.logs = meta.logs;
      if (report.outcome === 'failed') {
        report.program_error = programError(meta.logs);
        if (report.program_error) report.detail = report.program_error;
      }
      return;
    }
  }

  private async writeFinal(
    report: Report,
    payload: Payload,
    key: KeyConfig,
    intent: string | null,
    sent: boolean,
  ): Promise<void> {
    try {
      await this.ledger.append(
        this.entry(payload, key, intent, {
          command: 'sign',
          outcome: report.outcome,
          detail: report.detail,
          signature: report.signature,
          slot: report.slot,
          balance_change: report.balance_change,
        }),
      );
    } catch (e) {
      // Once sent, the caller must get the signature: the orphan intent keeps the reservation charged.
      if (!sent) throw e;
      const note = `the final audit entry could not be written (${errorMessage(e)}); the intent keeps the reservation charged`;
      report.detail = report.detail ? `${report.detail}; ${note}` : note;
      this.log.error(
        { key: key.name, signature: report.signature, err: errorMessage(e) },
        'final audit entry not written',
      );
    }
  }

  private entry(
    payload: Payload,
    key: KeyConfig,
    intent: string | null,
    rest: Pick<AuditEntryInput, 'command' | 'outcome' | 'detail' | 'signature' | 'slot' | 'balance_change'>,
  ): AuditEntryInput {
    const programs: string[] = [];
    for (const ix of payload.instructions)
      if (programs[programs.length - 1] !== ix.programId) programs.push(ix.programId);
    return {
      ts: nowSeconds(),
      key: key.name,
      payload_hash: payload.hash,
      programs,
      summary: payload.summary,
      intent,
      ...rest,
    };
  }

  private signerFor(key: KeyConfig): Signer {
    // Cached per key: re-importing an Ed25519 key costs ~15× a signature. The file's mode and pubkey were
    // checked when it was first loaded; a changed file needs a restart, like a changed config.
    let signer = this.signers.get(key.name);
    if (!signer) {
      signer = loadKeyFile(this.cfg.key_dir, key.name, key.pubkey);
      this.signers.set(key.name, signer);
    }
    return signer;
  }

  private explorer(signature: string | null): string | null {
    return signature && this.cfg.cluster.explorer ? `${this.cfg.cluster.explorer}${signature}` : null;
  }

  private usage(key: KeyConfig): Promise<KeyUsage> {
    return this.ledger.keyUsage(key.name, nowSeconds(), key.daily_lamport_cap);
  }

  private async haltOf(keyName: string): Promise<HaltRecord | null> {
    return this.memoryHalts.get(keyName) ?? (await this.ledger.getHalt(keyName));
  }

  private done(tool: 'check' | 'sign', report: Report, started: number): Report {
    this.deps.onReport?.(tool, report, performance.now() - started);
    return report;
  }

  // ---------------------------------------------------------------- key_show, halt, resume, ready

  async keyShow(input: { key?: string | null; principal: Principal }): Promise<KeyView[]> {
    const keys = this.selectKeys(input.key, input.principal);
    return Promise.all(keys.map((k) => this.cachedView(k)));
  }

  keyShowCached(input: { key?: string | null; principal: Principal }): KeyView[] | null {
    const keys = this.selectKeys(input.key, input.principal);
    const ttl = this.cfg.timings.key_show_cache_ms;
    const now = performance.now();
    const out: KeyView[] = [];
    for (const k of keys) {
      const cached = this.views.get(k.name);
      if (!cached || cached.settled === null || now - cached.at >= ttl) return null;
      out.push(cached.settled);
    }
    return out;
  }

  private selectKeys(named: string | null | undefined, principal: Principal): KeyConfig[] {
    if (named === undefined || named === null) return this.keys.usableBy(principal);
    // Authorisation first, so a token cannot probe which key names exist.
    if (!mayUse(principal, named)) throw new SignerError('key_not_authorized', notAuthorizedMessage(named));
    const key = this.keys.get(named);
    if (!key) throw new SignerError('key_unknown', `no key ${JSON.stringify(named)} in the config`);
    return [key];
  }

  private async view(key: KeyConfig): Promise<KeyView> {
    const [balance, usage, halt] = await Promise.all([
      this.chain.getBalance(key.pubkey).catch(() => null),
      this.usage(key),
      this.haltOf(key.name),
    ]);
    return {
      name: key.name,
      pubkey: key.pubkey,
      class: key.class,
      approval: key.approval,
      profile: key.profile,
      balance_lamports: balance,
      rate_limit_per_minute: key.rate_limit_per_minute,
      daily_lamport_cap: key.daily_lamport_cap,
      signs_last_minute: usage.signsLastMinute,
      spent_or_reserved_24h: usage.spent24h,
      halted: halt ? { reason: halt.reason, by: halt.by, ts: halt.ts } : null,
    };
  }

  private cachedView(key: KeyConfig): Promise<KeyView> {
    const ttl = this.cfg.timings.key_show_cache_ms;
    const now = performance.now();
    const cached = this.views.get(key.name);
    if (cached && now - cached.at < ttl) return cached.value;
    const value = this.view(key);
    if (ttl > 0) {
      const entry: { at: number; value: Promise<KeyView>; settled: KeyView | null } = { at: now, value, settled: null };
      this.views.set(key.name, entry);
      value.then(
        (view) => {
          entry.settled = view;
        },
        () => {
          if (this.views.get(key.name) === entry) this.views.delete(key.name); // a failed look-up (ledger down) is not kept
        },
      );
    }
    return value;
  }

  async halt(input: { key?: string | null; reason: string; principal: Principal }): Promise<HaltResult> {
    const reason = input.reason.trim();
    if (reason.length === 0) throw new SignerError('request_invalid', 'a halt needs a reason');
    if (reason.length > 1000) throw new SignerError('request_invalid', 'a halt reason is at most 1000 characters');
    const keys = this.selectKeys(input.key, input.principal);
    const by = principalLabel(input.principal);
    const result: HaltResult = { halted: [], not_recorded: [] };
    for (const key of keys) {
      const record: HaltRecord = { key: key.name, reason, by, ts: nowSeconds() };
      // In memory first: the brake holds in this process even if the ledger write below fails.
      const inMemory = this.memoryHalts.get(key.name);
      this.memoryHalts.set(key.name, inMemory ?? record);
      try {
        const stored = await this.ledger.halt(record);
        const already = stored.ts !== record.ts || stored.reason !== record.reason || stored.by !== record.by;
        this.memoryHalts.delete(key.name);
        result.halted.push({ ...stored, already_halted: already });
      } catch (e) {
        result.not_recorded.push({ key: key.name, error: errorMessage(e) });
        this.log.error(
          { key: key.name, err: errorMessage(e) },
          'halt held in memory only: the ledger could not record it',
        );
      }
      this.views.delete(key.name);
    }
    return result;
  }

  async resume(keyName: string): Promise<boolean> {
    if (!this.keys.get(keyName))
      throw new SignerError('key_unknown', `no key ${JSON.stringify(keyName)} in the config`);
    const hadMemory = this.memoryHalts.delete(keyName);
    const hadLedger = await this.ledger.resume(keyName, 'operator', nowSeconds());
    this.views.delete(keyName);
    return hadMemory || hadLedger;
  }

  async ready(): Promise<{ ok: boolean; detail: Record<string, string> }> {
    const detail: Record<string, string> = {};
    const [ledger, chain] = await Promise.allSettled([this.ledger.ping(), this.chain.getGenesisHash()]);
    detail.ledger = ledger.status === 'fulfilled' ? 'ok' : errorMessage(ledger.reason);
    if (chain.status === 'rejected') detail.chain = errorMessage(chain.reason);
    else if (this.cfg.cluster.genesis_hash !== null && chain.value !== this.cfg.cluster.genesis_hash) {
      detail.chain = `RPC genesis hash ${chain.value} is not ${this.cfg.cluster.name}`;
    } else detail.chain = 'ok';
    return { ok: detail.ledger === 'ok' && detail.chain === 'ok', detail };
  }
}

function refuse(report: Report, r: Refusal): Report {
  report.outcome = 'refused';
  report.failed_check = r.check;
  report.detail = `${r.check}: ${r.message}`;
  return report;
}

function haltRefusal(keyName: string, h: HaltRecord): Refusal {
  return {
    check: 'halted',
    message: `key "${keyName}" was halted by ${h.by} at ${new Date(h.ts * 1000).toISOString()}: ${h.reason}; only an operator can release it (sa-forge-signer resume ${keyName})`,
  };
}

/** Whole seconds as the ancestor printed them; short test timings keep one decimal. */
const seconds = (ms: number): number => Number((ms / 1000).toFixed(1));

const spend = (delta: number): number => (delta < 0 ? -delta : 0);

function limitsRefusal(key: KeyConfig, usage: KeyUsage, reservation: number | null): Refusal | null {
  if (usage.signsLastMinute >= key.rate_limit_per_minute) {
    return { check: 'limits', message: `rate limit: ${usage.signsLastMinute} signs in the last minute` };
  }
  if (usage.spent24h >= key.daily_lamport_cap) {
    return {
      check: 'limits',
      message: `daily cap: ${usage.spent24h} of ${key.daily_lamport_cap} lamports spent or reserved in 24 h`,
    };
  }
  if (reservation !== null && usage.spent24h + reservation > key.daily_lamport_cap) {
    return {
      check: 'limits',
      message: `daily cap: ${usage.spent24h} lamports spent or reserved in 24 h, plus ${reservation} for this transaction, exceeds ${key.daily_lamport_cap}`,
    };
  }
  return null;
}

const isLanded = (s: string | null): boolean => s === 'confirmed' || s === 'finalized';
