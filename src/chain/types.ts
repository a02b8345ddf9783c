/**
 * What the engine asks of a Solana JSON-RPC endpoint. Amounts are lamports as JS numbers (safe integers;
 * a value outside the safe range is a `shape` error). Commitment is `confirmed` unless a method says otherwise.
 */
export type RpcErrorKind = 'transport' | 'node' | 'shape' | 'timeout';

export interface SimulationResult {
  err: unknown; // null on success; the raw TransactionError JSON otherwise (e.g. "BlockhashNotFound")
  logs: string[];
  unitsConsumed: number | null;
  /** Post-simulation state of the accounts asked for, in order; null for an account that does not exist. */
  accounts: ({ lamports: number; owner: string } | null)[];
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
}

export interface AccountSummary {
  lamports: number;
  owner: string;
}

export interface ChainClient {
  getGenesisHash(): Promise<string>;
  getLatestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: number }>;
  /** 0 for an account that does not exist, as the RPC answers. */
  getBalance(address: string): Promise<number>;
  /** Fee for a compiled message (base64); null when the node cannot quote it (e.g. unknown blockhash). */
  getFeeForMessage(messageBase64: string): Promise<number | null>;
  simulateTransaction(
    txBase64: string,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; accounts: string[] },
  ): Promise<SimulationResult>;
  /** skipPreflight true, maxRetries 0; resolves to the signature the node reports. */
  sendTransaction(txBase64: string): Promise<string>;
  getSignatureStatuses(
    signatures: string[],
    opts: { searchTransactionHistory: boolean },
  ): Promise<(SignatureStatus | null)[]>;
  getBlockHeight(commitment: 'confirmed' | 'finalized'): Promise<number>;
  getTransaction(signature: string): Promise<TransactionMeta | null>;
  getMultipleAccounts(addresses: string[]): Promise<(AccountSummary | null)[]>;
  getAccountInfo(address: string): Promise<AccountSummary | null>;
}
