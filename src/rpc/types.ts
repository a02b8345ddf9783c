/**
 * What the engine asks of a Solana JSON-RPC endpoint. Amounts are lamports as JS numbers (safe integers;
 * a value outside the safe range is a `shape` error). Reads use the client's `commitment` unless a method
 * says otherwise.
 */
export type RpcErrorKind = 'transport' | 'node' | 'shape' | 'timeout' | 'aborted';

/** The commitment a cluster is configured for (see docs/chain.md). */
export type Commitment = 'confirmed' | 'finalized';

/**
 * The caller's bounds on one call, retries included: no retry waits past `deadlineAt` (epoch ms), and an aborted
 * `signal` ends the call at once (kind `aborted`).
 */
export interface CallLimits {
  signal?: AbortSignal;
  deadlineAt?: number;
}

export interface SimulationResult {
  err: unknown; // null on success; the raw TransactionError JSON otherwise (e.g. "BlockhashNotFound")
  logs: string[];
  unitsConsumed: number | null;
  /** The context slot the node simulated at. */
  slot: number;
  /** Post-simulation state of the accounts asked for, in order; null for an account that does not exist. */
  accounts: (AccountData | null)[];
  /**
   * Lamports of every account of the transaction (static keys, then loaded writable, then loaded readonly) in the
   * bank the simulation ran on, before it ran; null where the node does not report them (older nodes).
   */
  preBalances: number[] | null;
  /** The token accounts among them, in that same bank before the simulation ran; null where not reported. */
  preTokenBalances: TokenBalance[] | null;
}

/** A token account's balance as a node reports it around a transaction (preTokenBalances/postTokenBalances). */
export interface TokenBalance {
  /** Index in the transaction's full account list. */
  accountIndex: number;
  mint: string;
  /** The token account's owner; null where the node leaves it out. */
  owner: string | null;
  /** Base units, exact. */
  amount: bigint;
}

export interface SignatureStatus {
  slot: number;
  confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null;
  err: unknown;
}

export interface TransactionMeta {
  slot: number;
  err: unknown;
  fee: number | null;
  preBalance0: number | null;
  postBalance0: number | null;
  logs: string[];
  /** The transaction's signatures in slot order (base58); the first is its id. */
  signatures: string[];
  /** The message's own account keys (signers first); loaded addresses are not included. */
  accountKeys: string[];
  /** Lamports before and after, by index in the full account list; empty when the node gave no meta. */
  preBalances: number[];
  postBalances: number[];
  /** Token balances before and after, by index in the full account list; empty when the node gave none. */
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  /** The addresses loaded from lookup tables (writable, then read-only): the rest of the full account list. */
  loadedAddresses: string[];
}

/** One transaction that touched an address, as getSignaturesForAddress lists it (newest first). */
export interface AddressSignature {
  /** The transaction's id: its first signature. */
  signature: string;
  slot: number;
  err: unknown;
  confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null;
}

export interface AccountSummary {
  lamports: number;
  owner: string;
}

/** An account with its data (base64 on the wire), for reads that must decode it (lookup tables). */
export interface AccountData extends AccountSummary {
  data: Uint8Array;
}

/** Accounts read together, with the slot the node read them at. */
export interface AccountsAtSlot {
  slot: number;
  accounts: (AccountData | null)[];
}

/**
 * Every method may be retried on a transient failure (HTTP 429/5xx, a lost connection, a timeout) and moved to
 * another endpoint of the cluster: all of them are idempotent, sendTransaction included (the same signed bytes
 * carry the same signature, so a second copy cannot move funds twice). `limits` bounds the retries.
 */
export interface RpcClient {
  /** The commitment reads use, and the one a signature status must reach to count as landed. */
  readonly commitment: Commitment;
  getGenesisHash(limits?: CallLimits): Promise<string>;
  getLatestBlockhash(limits?: CallLimits): Promise<{ blockhash: string; lastValidBlockHeight: number }>;
  /** 0 for an account that does not exist, as the RPC answers. */
  getBalance(address: string, limits?: CallLimits): Promise<number>;
  /** Fee for a compiled message (base64); null when the node cannot quote it (e.g. unknown blockhash). */
  getFeeForMessage(messageBase64: string, limits?: CallLimits): Promise<number | null>;
  simulateTransaction(
    txBase64: string,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; accounts: string[] },
    limits?: CallLimits,
  ): Promise<SimulationResult>;
  /** skipPreflight true, maxRetries 0; resolves to the signature the node reports. */
  sendTransaction(txBase64: string, limits?: CallLimits): Promise<string>;
  getSignatureStatuses(
    signatures: string[],
    opts: { searchTransactionHistory: boolean },
    limits?: CallLimits,
  ): Promise<(SignatureStatus | null)[]>;
  getBlockHeight(commitment: Commitment, limits?: CallLimits): Promise<number>;
  getTransaction(signature: string, limits?: CallLimits): Promise<TransactionMeta | null>;
  /**
   * Transactions that touched `address`, newest first, at the client's commitment: at most `limit` (1..1000),
   * older than `before` when given.
   */
  getSignaturesForAddress(
    address: string,
    opts: { limit: number; before?: string },
    limits?: CallLimits,
  ): Promise<AddressSignature[]>;
  getMultipleAccounts(addresses: string[], limits?: CallLimits): Promise<(AccountSummary | null)[]>;
  getAccountInfo(address: string, limits?: CallLimits): Promise<AccountSummary | null>;
  /**
   * Accounts with their data, in order (null where none exists), read at a slot no earlier than `minContextSlot`
   * (the node answers only once it has reached it), with the slot of the read.
   */
  getAccountsAtSlot(addresses: string[], minContextSlot: number, limits?: CallLimits): Promise<AccountsAtSlot>;
  /** Accounts with their data, in order (null where none exists), and the context slot of the read. */
  getAccountsData(addresses: string[], limits?: CallLimits): Promise<AccountsAtSlot>;
  /** Whether a blockhash can still land a transaction, at the client's commitment. */
  isBlockhashValid(blockhash: string, limits?: CallLimits): Promise<boolean>;
}
