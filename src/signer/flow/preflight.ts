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
import { noUsage, type HaltRecord, type Ledger, type Usage } from '../../ledger/types';
import { SignerError, errorMessage } from '../../util/errors';
import { nowSeconds } from '../../util/time';
import type { HaltBook } from '../halts';
import type { Report } from '../report';
import { decide } from '../policy/decide';
import type { StructureFacts } from '../policy/facts';
import { ataOwnersToVerify } from '../policy/rules/ata-owners';
import { payloadFeePayerRefusal } from '../policy/rules/fee-payer';
import { denyRefusal } from '../policy/rules/key';
import { feeBound } from '../rules/fee-bound';
import { readTreasuryAccounts } from '../../treasury/read';
import { stop, type Step, type StepWith } from './step';
import { verdictStep } from './verdict-report';
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
  const notKey = payloadFeePayerRefusal(key, source.feePayer, source.foreignFeePayerAllowed);
  if (notKey) return stop(report, notKey);
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
  const opened = verdictStep(report, decide(key, { at: 'opened', halt }));
  if (!opened.ok) return opened;
  // A treasury key's accounts are read from the chain at each sign, so every replica sees the owner's change at once.
  const treasury = key.treasury?.accounts ?? [];
  if (treasury.length > 0) {
    const states = await readTreasuryAccounts(deps.chain, treasury);
    const delegated = verdictStep(report, decide(key, { at: 'treasury', states }));
    if (!delegated.ok) return delegated;
  }

  // Both are kept between signs (cluster-genesis.ts, recent-blockhash.ts): in the common case no round trip here.
  // When either must be asked for, both go in one request. The blockhash is only used once the genesis is checked.
  const known = clusterGenesisOf(deps.chain);
  const recent = recentBlockhashOf(deps.chain);
  const [last, lifetime] = await Promise.all([known.current(), recent.get()]);
  const expected = deps.cluster.genesis_hash;
  // The genesis last answered is not the cluster's: ask again before refusing, since it may have been a passing one.
  const genesis = expected === null || last === expected ? last : await known.reread();
  const cluster = verdictStep(report, decide(key, { at: 'cluster', cluster: deps.cluster, genesis }));
  if (!cluster.ok) return cluster;
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
  const structure: StructureFacts = {
    at: 'structure',
    cluster: deps.cluster,
    msg: prepared.msg,
    partialSigners: prepared.partialSigners,
    foreignFeePayer: prepared.foreignFeePayer,
  };
  const structural = verdictStep(report, decide(key, structure));
  if (!structural.ok) return structural;

  const newAccounts = await partialSignersAreNew(deps.chain, key, prepared.mustBeNew, report);
  if (!newAccounts.ok) return newAccounts;

  const owners = await ataOwnersAreTrusted(deps, key, structure, report);
  if (!owners.ok) return owners;

  // The fee cap bounds what the key pays in fees: nothing when another account pays them.
  const fee = prepared.foreignFeePayer === null ? feeBound(prepared.msg) : null;
  const limits = verdictStep(report, decide(key, { at: 'prepared', fee, usage }));
  if (!limits.ok) return limits;
  return { ok: true, usage: usage ?? noUsage(), usageKnown: usage !== null, prepared };
}

/** A partial signer stands for an account the transaction creates: the policy judges which exist already. */
async function partialSignersAreNew(
  chain: RpcClient,
  key: KeyConfig,
  signers: readonly string[],
  report: Report,
): Promise<Step> {
  const existing = signers.length === 0 ? [] : await chain.getMultipleAccounts([...signers]);
  const exist = existing.map((a) => a !== null);
  return verdictStep(report, decide(key, { at: 'new_accounts', signers, exist }));
}

/** Token accounts created for someone other than the key or its destinations: their owners' programs, judged. */
async function ataOwnersAreTrusted(
  deps: PreflightDeps,
  key: KeyConfig,
  structure: StructureFacts,
  report: Report,
): Promise<Step> {
  const owners = ataOwnersToVerify(key, structure.msg);
  if (!Array.isArray(owners)) return stop(report, owners);
  const accounts = owners.length === 0 ? [] : await deps.chain.getMultipleAccounts(owners);
  const programOwners = accounts.map((a) => a?.owner ?? null);
  const facts = { at: 'ata_owners', cluster: deps.cluster, owners, programOwners } as const;
  return verdictStep(report, decide(key, facts));
}
