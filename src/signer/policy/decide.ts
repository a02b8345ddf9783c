/**
 * The policy core: `decide(policy, facts) → verdict`, one function every flow asks (check, sign and sign_only,
 * messages, the cap gate, policy replay). It runs the pure rules of rules/*.ts in the order docs/policy.md lists
 * them for the point of the flow the facts come from, and returns the first refusal or what was allowed, with the
 * figures the report shows. Nothing here reads the ledger, the chain or the clock, or writes a report.
 *
 * Where several policies hold at once (after an approval, the one the sign began with and the one in force now),
 * every one must allow: the first refusal wins, and the allowance left is the smallest.
 */
import type { KeyConfig } from '../../config/types';
import type { Usage } from '../../ledger/types';
import { spendOf } from '../../ledger/usage-book';
import type { Refusal } from '../refusals';
import { SYSTEM_PROGRAM } from '../../solana/programs';
import type {
  Facts,
  GateFacts,
  MessageFacts,
  Moves,
  PendingFacts,
  PreparedFacts,
  RecordedFacts,
  SimulatedFacts,
} from './facts';
import { needsApproval } from './rules/approval';
import { approvedFiguresRefusal } from './rules/approved-figures';
import { ataOwnerRefusal } from './rules/ata-owners';
import { clusterRefusal } from './rules/cluster';
import { messageContentRefusal } from './rules/message-content';
import { partialSignerExistsRefusal } from './rules/signers';
import { spendUnknownRefusal } from './rules/spend-unknown';
import { structuralRefusal, STRUCTURAL_CHECKS } from './rules/structural';
import { treasuryDelegateRefusal } from './rules/treasury-delegate';
import { dailyCapRefusal, remainingDaily, spentLamports } from './rules/daily-cap';
import { destinationCapRefusal } from './rules/destination-cap';
import { credentialSpendRefusal } from './rules/credential';
import { destinationRefusal } from './rules/destinations';
import { feeCapRefusal } from './rules/fee-cap';
import { haltRefusal } from './rules/halted';
import { inFlightRefusal } from './rules/in-flight';
import { denyRefusal } from './rules/key';
import { perTxRefusal } from './rules/per-tx';
import { credentialBudgetRefusal } from './rules/credential-budget';
import { allowedPrograms, recordedProgramRefusal } from './rules/programs';
import { rateRefusal } from './rules/rate';
import { recordedUsdRefusal, remainingDailyUsd, usdCapRefusal, usdNeedsApproval } from './rules/usd-caps';
import type { UsdSpend } from '../../pricing/usd-spend';
import {
  decimalsFrom,
  remainingTokens,
  tokenCapRefusal,
  tokenDestinationRefusal,
  tokenPolicyRefusal,
  unlistedMintRefusal,
} from './rules/tokens';
import { allowed, refused, type Verdict, type VerdictFigures } from './verdict';
import type { PassName } from '../vocabulary';

/** One key's policy, or several that must all allow (the cap gate after an approval). */
export type Policy = KeyConfig | readonly KeyConfig[];

export function decide(policy: Policy, facts: Facts): Verdict {
  const keys: readonly KeyConfig[] = Array.isArray(policy) ? policy : [policy as KeyConfig];
  // An entry no figure bounds counts as a whole daily cap: the smallest of the caps judged makes it count least,
  // and such an entry alone already refuses under that cap (docs/policy.md, "Spend and slots").
  const wholeCap = Math.min(...keys.map((k) => k.daily_lamport_cap));
  if (facts.at === 'gate') return gate(keys, facts, wholeCap);
  return everyPolicy(keys, (key) => decideOne(key, facts, wholeCap));
}

/** Every policy must allow: the first refusal, else the last verdict with the smallest allowance left of them. */
function everyPolicy(keys: readonly KeyConfig[], judge: (key: KeyConfig) => Verdict): Verdict {
  let last: Verdict | null = null;
  let left: number | undefined;
  let leftUsd: bigint | undefined;
  for (const key of keys) {
    last = judge(key);
    if (last.outcome === 'refused') return last;
    const l = last.figures.remainingDailyLamports;
    if (l !== undefined) left = left === undefined ? l : Math.min(left, l);
    const u = last.figures.remainingDailyUsd;
    if (u !== undefined) leftUsd = leftUsd === undefined || u < leftUsd ? u : leftUsd;
  }
  if (last === null) throw new Error('the policy core judges at least one key policy');
  const figures = { ...last.figures };
  if (left !== undefined) figures.remainingDailyLamports = left;
  if (leftUsd !== undefined) figures.remainingDailyUsd = leftUsd;
  return { ...last, figures };
}

function decideOne(key: KeyConfig, facts: Exclude<Facts, GateFacts>, wholeCap: number): Verdict {
  switch (facts.at) {
    case 'opened':
      return facts.halt ? refused(haltRefusal(facts.halt)) : allowed([]);
    case 'cluster':
      return only(clusterRefusal(facts.cluster.name, facts.cluster.genesis_hash, facts.genesis), ['cluster']);
    case 'treasury':
      return only(treasuryDelegateRefusal(key, facts.states), []);
    case 'structure':
      return only(structuralRefusal(key, facts), [...STRUCTURAL_CHECKS]);
    case 'new_accounts':
      return only(partialSignerExistsRefusal(facts.signers, facts.exist), ['new_accounts']);
    case 'ata_owners':
      return only(ataOwnerRefusal(facts.cluster, facts.owners, facts.programOwners), ['ata_owners']);
    case 'approved':
      return only(approvedFiguresRefusal(facts.approval, facts.toSend), []);
    case 'content':
      return only(messageContentRefusal(key, facts), ['message']);
    case 'prepared':
      return prepared(key, facts, wholeCap);
    case 'message':
      return message(key, facts);
    case 'simulated':
      return simulated(key, facts, wholeCap);
    case 'recorded':
      return recorded(key, facts, wholeCap);
    case 'pending':
      return pending(key, facts, wholeCap);
  }
}

/** One rule's judgement: its refusal, else the checks it passes. */
function only(refusal: Refusal | null, passed: PassName[]): Verdict {
  return refusal ? refused(refusal) : allowed(passed);
}

/** The fee cap (the key's own fees only), then the limits already used up: the rate and the daily cap. */
function prepared(key: KeyConfig, facts: PreparedFacts, wholeCap: number): Verdict {
  const fee = facts.fee === null ? null : feeCapRefusal(key, facts.fee);
  if (fee) return refused(fee);
  if (facts.usage === null) return allowed([]);
  const limits = rateRefusal(key, facts.usage) ?? dailyCapRefusal(key, spentLamports(facts.usage, wholeCap), null);
  return limits ? refused(limits) : allowed(['limits']);
}

/** A message moves nothing: the halt and the rate are all its own state the policy judges. */
function message(key: KeyConfig, facts: MessageFacts): Verdict {
  if (facts.halt) return refused(haltRefusal(facts.halt));
  if (facts.usage === null) return allowed([]);
  const rate = rateRefusal(key, facts.usage);
  return rate ? refused(rate) : allowed(['limits']);
}

/**
 * After a simulation: the token policy, the destinations and a credential's spend checks on what it moves, whether
 * an operator must approve,
 * and the caps previewed on the usage read before it (the binding decision is the gate's).
 */
function simulated(key: KeyConfig, facts: SimulatedFacts, wholeCap: number): Verdict {
  const m = facts.moves;
  const destination = destinationRefusal(key, m.gains) ?? tokenPolicyRefusal(key, m.tokens, m.mints);
  if (destination) return refused(destination);
  const spend = facts.usd ?? null;
  const narrowed = credentialSpendRefusal(facts.credential, key, m.balanceChange, m.gains, spend, m.tokens.mints);
  if (narrowed) return refused(narrowed, ['destinations']);
  const usdFigures = dollarFigures(key, spend, facts.usage);
  const usd = usdCapRefusal(key, spend, facts.usage?.usdMicros ?? null);
  if (usd) return refused(usd, ['destinations'], usdFigures);
  const figures: VerdictFigures = {
    ...usdFigures,
    needsApproval: usdNeedsApproval(key, spend) ?? needsApproval(key, m.balanceChange, m.tokens),
  };
  // The credential's daily budgets, previewed on their usage read before the simulation (bound at the gate).
  const budgets = facts.budgets ?? [];
  const overBudget =
    budgets.length > 0 && m.balanceChange !== null
      ? credentialBudgetRefusal(budgets, spendOf(m.balanceChange), usdMicrosOf(spend))
      : null;
  if (facts.usage === null)
    return overBudget ? refused(overBudget, ['destinations'], figures) : allowed(['destinations'], figures);
  const cap = capVerdict(key, facts.usage, movesOf(m), wholeCap);
  if (cap.outcome === 'allowed' && overBudget)
    return refused(overBudget, ['destinations'], { ...figures, ...cap.figures });
  return { ...cap, passed: ['destinations'], figures: { ...figures, ...cap.figures } };
}

/** The binding decision: the same transaction not already in flight, every policy's caps, then the halt. */
function gate(keys: readonly KeyConfig[], facts: GateFacts, wholeCap: number): Verdict {
  const inFlight = inFlightRefusal(facts.signature, facts.signatureInFlight);
  if (inFlight) return refused(inFlight);
  const moves = movesOf(facts.moves);
  const spend = facts.usd ?? null;
  const cap = everyPolicy(keys, (key) => {
    const lamports = capVerdict(key, facts.usage, moves, wholeCap);
    if (lamports.outcome === 'refused') return lamports;
    const figures = { ...lamports.figures, ...dollarFigures(key, spend, facts.usage) };
    const usd = usdCapRefusal(key, spend, facts.usage.usdMicros);
    return usd ? refused(usd, [], figures) : allowed([], figures);
  });
  if (cap.outcome === 'refused') return cap;
  const { figures } = cap;
  // The key's caps and every budget of the credential that asked: the reservation must fit them all.
  const budgets = facts.budgets ?? [];
  if (budgets.length > 0 && figures.reservation !== undefined) {
    const over = credentialBudgetRefusal(budgets, figures.reservation, usdMicrosOf(spend));
    if (over) return refused(over, [], figures);
  }
  if (facts.halt) return refused(haltRefusal(facts.halt), ['cap'], figures);
  return allowed(['cap'], figures);
}

/**
 * A recorded sign judged again (policy replay): from what the ledger holds, the programs it called, per mint it
 * spent the token policy and its destinations, then the caps over the signs allowed before it.
 */
function recorded(key: KeyConfig, facts: RecordedFacts, wholeCap: number): Verdict {
  const program = recordedProgramRefusal(allowedPrograms(facts.cluster, key), facts.programs);
  if (program) return refused(program);
  const tokens = recordedTokensRefusal(key, facts.moves);
  if (tokens) return refused(tokens);
  const cap = capVerdict(key, facts.usage, facts.moves, wholeCap);
  if (cap.outcome === 'refused') return cap;
  const usd = recordedUsdRefusal(key, facts.usd ?? null, facts.usage.usdMicros);
  return usd ? refused(usd, [], cap.figures) : cap;
}

/**
 * A pending approval's recorded figures under the policy in force now: the halt, deny, then (a message moves
 * nothing) the lamport destinations, the limits, the token policy and the token caps.
 */
function pending(key: KeyConfig, facts: PendingFacts, wholeCap: number): Verdict {
  const { approval, usage } = facts;
  if (facts.halt) return refused(haltRefusal(facts.halt));
  const deny = denyRefusal(key);
  if (deny) return refused(deny);
  if (approval.message !== undefined && approval.message !== null) return allowed([]);
  const gains = (approval.destinations ?? []).map((d) => ({
    address: d.address,
    lamports: d.lamports,
    // A request recorded without these is judged as a payment to a wallet, the stricter reading.
    created: d.created ?? false,
    owner: d.owner ?? SYSTEM_PROGRAM,
  }));
  const destination = destinationRefusal(key, gains);
  if (destination) return refused(destination);
  const decimals = new Map((approval.tokens ?? []).map((t) => [t.mint, t.decimals]));
  const moves: Moves = {
    balanceChange: approval.balance_change,
    gains,
    mints: (approval.tokens ?? []).map((t) => ({
      mint: t.mint,
      keyChange: BigInt(t.change),
      credits: new Map(t.credits.map((c) => [c.owner, BigInt(c.amount)])),
    })),
    decimals: (mint) => decimals.get(mint) ?? null,
  };
  // A request recorded with no balance change: the limits already used up are all that can be judged of it.
  const spent = spentLamports(usage, wholeCap);
  const limits =
    approval.balance_change === null
      ? (rateRefusal(key, usage) ?? dailyCapRefusal(key, spent, null))
      : capLamportsRefusal(key, usage, spent, spendOf(approval.balance_change), gains);
  if (limits) return refused(limits);
  const tokens = recordedTokensRefusal(key, moves) ?? tokenCapRefusal(key, moves, moves.decimals, usage.tokens);
  return tokens ? refused(tokens) : allowed([]);
}

/** Per mint the key spent of a recorded sign: the mint listed, and its destinations. */
function recordedTokensRefusal(key: KeyConfig, moves: Moves): Refusal | null {
  for (const m of moves.mints) {
    if (m.keyChange >= 0n) continue;
    const decimals = moves.decimals(m.mint);
    const policy = (key.tokens ?? []).find((t) => t.mint === m.mint);
    if (!policy) return unlistedMintRefusal(m.mint, -m.keyChange, decimals);
    const destination = tokenDestinationRefusal(key, policy, m, decimals);
    if (destination) return destination;
  }
  return null;
}

/**
 * The lamport limits in their order: the rate, the daily cap used up, the per-transaction cap, the daily cap, and
 * what each account it pays received.
 */
function capLamportsRefusal(
  key: KeyConfig,
  usage: Usage,
  spent: number,
  reservation: number,
  gains: Moves['gains'],
): Refusal | null {
  return (
    rateRefusal(key, usage) ??
    dailyCapRefusal(key, spent, null) ??
    perTxRefusal(key, reservation) ??
    dailyCapRefusal(key, spent, reservation) ??
    destinationCapRefusal(key, gains, usage.received)
  );
}

/**
 * The caps of one key on what a transaction moves: the rate, the daily cap already used up, the per-transaction
 * cap, the daily cap with this transaction, and each mint's caps. The allowance left is worked out whatever refuses.
 */
function capVerdict(key: KeyConfig, usage: Usage, moves: Moves, wholeCap: number): Verdict {
  if (moves.balanceChange === null) {
    return refused(spendUnknownRefusal());
  }
  const reservation = spendOf(moves.balanceChange);
  const spent = spentLamports(usage, wholeCap);
  const figures: VerdictFigures = { reservation, remainingDailyLamports: remainingDaily(key, spent, reservation) };
  if ((key.tokens ?? []).length > 0) figures.remainingDailyTokens = remainingTokens(key, moves, usage.tokens);
  const refusedBy =
    capLamportsRefusal(key, usage, spent, reservation, moves.gains) ??
    tokenCapRefusal(key, moves, moves.decimals, usage.tokens);
  return refusedBy ? refused(refusedBy, [], figures) : allowed([], figures);
}

/** The dollar figures of a priced key's spend: its value, and with the usage what is left of `usd.per_day`. */
function dollarFigures(key: KeyConfig, spend: UsdSpend | null, usage: Usage | null): VerdictFigures {
  const figures: VerdictFigures = {};
  if (spend?.ok === true) figures.usdValue = spend.usd;
  const left = usage === null ? null : remainingDailyUsd(key, usage.usdMicros, spend);
  if (left !== null) figures.remainingDailyUsd = left;
  return figures;
}

/** The micro-dollars a valued spend takes out of the key; null when it was not valued. */
function usdMicrosOf(spend: UsdSpend | null): bigint | null {
  return spend?.ok === true ? spend.usd : null;
}

/** A simulation's figures as the caps read them. */
export function movesOf(m: SimulatedFacts['moves']): Moves {
  return { balanceChange: m.balanceChange, gains: m.gains, mints: m.tokens.mints, decimals: decimalsFrom(m.mints) };
}
