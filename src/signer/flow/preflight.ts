/**
 * Everything check and sign do before simulating: the key's own settings, its halt and usage, the chain's
 * identity, preparing the transaction, the structural checks on its resolved accounts, and the look-ups some
 * checks need (partial signers that must be new, owners of token accounts it creates). The order and the
 * meaning of each check are described in docs/policy.md.
 */
import { clusterGenesisOf } from '../../rpc/cluster-genesis';
import { recentBlockhashOf } from '../../rpc/recent-blockhash';
import type { RpcClient } from '../../rpc/types';
import type { ClusterProfile, KeyConfig } from '../../config/types';
import type { HaltRecord, Ledger, Usage } from '../../ledger/types';
import { SignerError, errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import {
  ataOwnerRefusal,
  ataOwnersToVerify,
  structuralRefusal,
  STRUCTURAL_CHECKS,
  type CheckSubject,
} from '../rules/structural';
import type { HaltBook } from '../halts';
import { refusal } from '../refusals';
import type { Report } from '../report';
import { decide } from '../policy/decide';
import { denyRefusal } from '../policy/rules/key';
import { feeBound } from '../rules/fee-bound';
import { treasuryDelegateRefusal } from '../rules/treasury-delegate';
import { stop, type Step, type StepWith } from './step';
import { reportVerdict } from './verdict-report';
import type { PreparedTransaction, TransactionSource } from '../sources/transaction';

export interface PreflightDeps {
  cluster: ClusterProfile;
  chain: RpcClient;
  ledger: Ledger;
  halts: HaltBook;
}

export interface PreflightInput {
  /** check previews: it goes on (with a warning) when the ledger cannot be read; sign fails closed. */
  mode: 'check' | 'sign';
  key: KeyConfig;
  source: TransactionSource;
  report: Report;
  signal: AbortSignal | undefined;
}

export interface Preflighted {
  usage: Usage;
  /** False when check could not read the ledger: `usage` is then zeros, not the key's. */
  usageKnown: boolean;
  /** Prepared for the blockhash the checks ran against; the first simulation reuses it. */
  prepared: PreparedTransaction;
}

/** The key's usage now, for its caps. */
export async function keyUsage(ledger: Ledger, key: KeyConfig): Promise<Usage> {
  return await ledger.keyUsage(key.name, nowSeconds());
}

export async function preflight(deps: PreflightDeps, input: PreflightInput): Promise<StepWith<Preflighted>> {
  const { key, source, report } = input;
  // Payload v2 may name another fee payer (an x402 facilitator) when the key is one of its signers: the
  // source checks that once it has decoded the signer slots. A v1 payload's fee payer is the key it compiles for.
  if (source.feePayer !== key.pubkey && !source.foreignFeePayerAllowed) {
    return stop(
      report,
      refusal('fee_payer_not_key', `payload fee payer ${source.feePayer} is not key "${key.name}" (${key.pubkey})`, {
        fee_payer: source.feePayer,
      }),
    );
  }
  const deny = denyRefusal(key);
  if (deny) return stop(report, deny);

  let halt: HaltRecord | null;
  let usage: Usage | null = null;
  try {
    [halt, usage] = await Promise.all([deps.halts.current(key.name), keyUsage(deps.ledger, key)]);
  } catch (e) {
    if (input.mode === 'sign') throw e;
    halt = deps.halts.held(key.name);
    report.warnings.push(`the ledger could not be read (${errorMessage(e)}): halts and limits were not previewed`);
  }
  if (reportVerdict(report, decide(key, { at: 'opened', halt }))) return { ok: false, report };
  const revoked = await treasuryDelegateRefusal(deps.chain, key);
  if (revoked) return stop(report, revoked);

  // Both are kept between signs (cluster-genesis.ts, recent-blockhash.ts): in the common case no round trip here.
  // When either must be asked for, both go in one request. The blockhash is only used once the genesis is checked.
  const known = clusterGenesisOf(deps.chain);
  const recent = recentBlockhashOf(deps.chain);
  const [last, lifetime] = await Promise.all([known.current(), recent.get()]);
  const expected = deps.cluster.genesis_hash;
  // The genesis last answered is not the cluster's: ask again before refusing, since it may have been a passing one.
  const genesis = expected === null || last === expected ? last : await known.reread();
  if (expected !== null && genesis !== expected) {
    return stop(
      report,
      refusal('wrong_cluster', `RPC genesis hash ${genesis} is not ${deps.cluster.name}`, { genesis_hash: genesis }),
    );
  }
  report.checks.push('chain');
  if (input.signal?.aborted) throw new SignerError('cancelled', 'the request was cancelled');

  let ready = await source.prepare(lifetime);
  if (ready.ok && input.mode === 'sign' && source.refreshable) {
    const { msg } = ready.prepared;
    // The same payload signed again on the kept blockhash would be the same transaction: build it on a fresh one.
    if (!recent.firstUse(msg.recentBlockhash, msg.bytes)) {
      ready = await source.prepare(await recent.fresh());
      if (ready.ok) recent.firstUse(ready.prepared.msg.recentBlockhash, ready.prepared.msg.bytes);
    }
  }
  if (!ready.ok) return stop(report, ready.refusal);
  report.checks.push(...ready.passed);
  const { prepared } = ready;
  report.fee_payer = prepared.msg.accountKeys[0] ?? null;
  const subject: CheckSubject = {
    key,
    cluster: deps.cluster,
    msg: prepared.msg,
    partialSigners: prepared.partialSigners,
    foreignFeePayer: prepared.foreignFeePayer,
  };
  const structural = structuralRefusal(subject);
  if (structural) return stop(report, structural);
  report.checks.push(...STRUCTURAL_CHECKS);

  const newAccounts = await partialSignersAreNew(deps.chain, prepared.mustBeNew, report);
  if (!newAccounts.ok) return newAccounts;
  report.checks.push('new_accounts');

  const owners = await ataOwnersAreTrusted(deps, subject, report);
  if (!owners.ok) return owners;
  report.checks.push('ata_owners');

  // The fee cap bounds what the key pays in fees: nothing when another account pays them.
  const fee = prepared.foreignFeePayer === null ? feeBound(prepared.msg) : null;
  if (reportVerdict(report, decide(key, { at: 'prepared', fee, usage }))) return { ok: false, report };
  const none: Usage = {
    signsLastMinute: 0,
    lamports: 0,
    unbounded: 0,
    received: new Map(),
    tokens: new Map(),
    usdMicros: 0n,
  };
  return { ok: true, usage: usage ?? none, usageKnown: usage !== null, prepared };
}

/** A partial signer stands for an account the transaction creates: it must not exist yet. */
async function partialSignersAreNew(chain: RpcClient, signers: readonly string[], report: Report): Promise<Step> {
  if (signers.length === 0) return { ok: true };
  const existing = await chain.getMultipleAccounts([...signers]);
  const taken = signers.find((_, i) => existing[i] !== null);
  if (taken)
    return stop(
      report,
      refusal('partial_signer_exists', `partial signer ${taken} already exists on-chain`, { account: taken }),
    );
  return { ok: true };
}

/** A token account created for someone other than the key or its destinations must belong to a game program. */
async function ataOwnersAreTrusted(deps: PreflightDeps, subject: CheckSubject, report: Report): Promise<Step> {
  const owners = ataOwnersToVerify(subject);
  if (!Array.isArray(owners)) return stop(report, owners);
  if (owners.length === 0) return { ok: true };
  const accounts = await deps.chain.getMultipleAccounts(owners);
  const games = new Set(deps.cluster.game_programs);
  const foreign = owners.find((_, i) => {
    const account = accounts[i];
    return !account || !games.has(account.owner);
  });
  if (foreign) return stop(report, ataOwnerRefusal(foreign));
  return { ok: true };
}
