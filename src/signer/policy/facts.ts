/**
 * The facts the flows gather for the policy to decide on (decide.ts), one shape per point of a flow where the
 * policy is asked. Facts are data the flows read (the halt, the ledger's usage, what a simulation or the audit log
 * says moves); they carry no cap and no policy value: those are the key's, given to `decide` beside them.
 */
import type { ClusterProfile } from '../../config/types';
import type { TreasuryAccountState } from '../../treasury/read';
import type { CompiledMessage } from '../compile';
import type { ApprovedFacts } from './rules/approved-figures';
import type { ContentFacts } from './rules/message-content';
import type { ApprovalRecord, HaltRecord, Usage } from '../../ledger/types';
import type { UsdSpend } from '../../pricing/usd-spend';
import type { UsdMicros } from '../../util/usd-amounts';
import type { Figures } from '../flow/simulate';
import type { FeeBound } from '../rules/fee-bound';
import type { CredentialSpend } from '../types';
import type { DecimalsOf, MintFlow } from './rules/tokens';
import type { BudgetFact } from './rules/credential-budget';

/** What a transaction moves, as the caps read it: from a simulation, or from a recorded sign (replay). */
export interface Moves {
  /** The key's lamport change, fee taken off (negative is a spend); null: the simulation did not report it. */
  balanceChange: number | null;
  /** Lamports each writable account other than the key gains. */
  gains: Figures['gains'];
  /** Per mint, the key's change and each other owner's credit. */
  mints: readonly MintFlow[];
  decimals: DecimalsOf;
}

/** What a simulation says the transaction moves, with what the token policy reads of the mints. */
export type SimulatedMoves = Pick<Figures, 'balanceChange' | 'gains' | 'tokens' | 'mints'>;

/** Before anything else of a sign is looked at: whether the key is halted. */
export interface OpenedFacts {
  at: 'opened';
  halt: HaltRecord | null;
}

/**
 * The prepared message, before it is simulated: the most it can pay in fees (null: another account pays them) and
 * the key's usage (null: `check` could not read the ledger, so the limits are not previewed).
 */
export interface PreparedFacts {
  at: 'prepared';
  fee: FeeBound | null;
  usage: Usage | null;
}

/** After a simulation: what it moves, and the usage to preview the cap against (null: no preview). */
export interface SimulatedFacts {
  at: 'simulated';
  moves: SimulatedMoves;
  /**
   * What it takes out of the key in dollars, from prices read with the simulation; absent or null: none were read
   * (a key with `usd` caps is then refused, never judged as free).
   */
  usd?: UsdSpend | null;
  usage: Usage | null;
  /** The spend checks of the credential the request came with (none for a bearer token). */
  credential?: CredentialSpend;
  /** Its daily budgets with their usage read before the simulation, to preview (absent: no preview). */
  budgets?: readonly BudgetFact[];
}

/** At the cap gate, read under the key's lock (or in the store's one transaction): the binding decision. */
export interface GateFacts {
  at: 'gate';
  moves: SimulatedMoves;
  /** As for SimulatedFacts: the dollar value of the simulation the gate judges. */
  usd?: UsdSpend | null;
  usage: Usage;
  halt: HaltRecord | null;
  /** The transaction's signature (null: none to look up) and whether an intent with it has no final yet. */
  signature: string | null;
  signatureInFlight: boolean;
  /**
   * The daily budgets of the credential that asked, each with its block's usage read under the block's budget lock
   * (absent or empty: no budget, a bearer token's or an operator's sign).
   */
  budgets?: readonly BudgetFact[];
}

/** A message to sign: the key's halt and its usage (null: `check` could not read the ledger). */
export interface MessageFacts {
  at: 'message';
  halt: HaltRecord | null;
  usage: Usage | null;
}

/**
 * A sign the audit log recorded, judged again (policy replay): the top-level programs it called, what it moved,
 * and the usage of the signs allowed before it. The cluster says which programs every key may call.
 */
export interface RecordedFacts {
  at: 'recorded';
  cluster: ClusterProfile;
  programs: readonly string[];
  moves: Moves;
  /**
   * The dollar value the sign's intent recorded at sign time (never re-priced); absent or null: it recorded none,
   * and the dollar caps do not judge it.
   */
  usd?: UsdMicros | null;
  usage: Usage;
}

/**
 * A pending approval's recorded figures, for the operator about to decide: the key's usage and halt now. The sign
 * itself is judged again after the decision; this tells the approver beforehand.
 */
export interface PendingFacts {
  at: 'pending';
  approval: Pick<ApprovalRecord, 'balance_change' | 'tokens' | 'destinations' | 'message'>;
  usage: Usage;
  halt: HaltRecord | null;
}

/** The cluster the RPC answers for: its genesis hash, against the configured cluster's (null: any is taken). */
export interface ClusterFacts {
  at: 'cluster';
  cluster: Pick<ClusterProfile, 'name' | 'genesis_hash'>;
  genesis: string;
}

/** A treasury key's accounts as the chain holds them now: those that are token accounts, with their delegate. */
export interface TreasuryFacts {
  at: 'treasury';
  states: readonly Pick<TreasuryAccountState, 'account' | 'delegate'>[];
}

/** The prepared message with its resolved accounts, for the structural checks (rules/structural.ts). */
export interface StructureFacts {
  at: 'structure';
  cluster: ClusterProfile;
  msg: CompiledMessage;
  partialSigners: readonly string[];
  /** The fee payer when it is not the key (payload v2, sign_only): it signs last, so its slot may be empty. */
  foreignFeePayer?: string | null;
}

/** The partial signers the transaction creates, and for each whether an account of that address exists already. */
export interface NewAccountsFacts {
  at: 'new_accounts';
  signers: readonly string[];
  exist: readonly boolean[];
}

/** Owners of token accounts the transaction creates that need a look-up, and the program owning each on chain. */
export interface AtaOwnersFacts {
  at: 'ata_owners';
  cluster: ClusterProfile;
  owners: readonly string[];
  programOwners: readonly (string | null)[];
}

/** What the transaction about to be sent after an approval does, beside what the operators approved. */
export interface AfterApprovalFacts extends ApprovedFacts {
  at: 'approved';
}

/** What a message payload's bytes are (message/content.ts decodes them). */
export interface MessageContentFacts extends ContentFacts {
  at: 'content';
}

export type Facts =
  | OpenedFacts
  | ClusterFacts
  | TreasuryFacts
  | StructureFacts
  | NewAccountsFacts
  | AtaOwnersFacts
  | PreparedFacts
  | SimulatedFacts
  | AfterApprovalFacts
  | GateFacts
  | MessageFacts
  | MessageContentFacts
  | RecordedFacts
  | PendingFacts;
