/**
 * The engine's view of a Solana cluster over plain JSON-RPC 2.0: reads at the cluster's commitment (`confirmed`
 * unless configured `finalized`), base64 transactions, sends with skipPreflight and no node-side retries (the
 * engine rebroadcasts the same bytes itself). Every result is shape-checked before it is believed. Calls are
 * retried and moved between the cluster's endpoints as resilient-rpc.ts describes; every RpcClient method is
 * idempotent, requestAirdrop is not and is sent once.
 */
import { RpcError } from './json-rpc-transport';
import { createResilientRpc, type ResilientRpc, type RetryEvent, type RetrySettings } from './resilient-rpc';
import * as shape from './rpc-shapes';
import type {
  AccountsAtSlot,
  AddressSignature,
  AccountSummary,
  CallLimits,
  RpcClient,
  Commitment,
  SignatureStatus,
  SimulationResult,
  TransactionMeta,
} from './types';

export { RpcError, isRpcError, describeEndpoint } from './json-rpc-transport';

export interface JsonRpcClientOptions {
  /** Deadline of each attempt, connection included. */
  timeoutMs: number;
  /** Commitment of reads and of confirmation (default `confirmed`). */
  commitment?: Commitment;
  /** Retry settings (default: DEFAULT_RETRY); `{ ...DEFAULT_RETRY, retries: 0 }` sends every call once. */
  retry?: RetrySettings;
  /** Cool-down of a failed endpoint before it is preferred again. */
  cooldownMs?: number;
  /** Source of the backoff jitter, in [0, 1). */
  random?: () => number;
  onRetry?: (event: RetryEvent) => void;
}

const IDEMPOTENT = { idempotent: true } as const;

export class JsonRpcClient implements RpcClient {
  readonly commitment: Commitment;
  private readonly rpc: ResilientRpc;

  /** `urls`: one endpoint, or the cluster's endpoints in order of preference. */
  constructor(urls: string | readonly string[], opts: JsonRpcClientOptions) {
    this.commitment = opts.commitment ?? 'confirmed';
    this.rpc = createResilientRpc({
      urls: typeof urls === 'string' ? [urls] : urls,
      timeoutMs: opts.timeoutMs,
      ...(opts.retry === undefined ? {} : { retry: opts.retry }),
      ...(opts.cooldownMs === undefined ? {} : { cooldownMs: opts.cooldownMs }),
      ...(opts.random === undefined ? {} : { random: opts.random }),
      ...(opts.onRetry === undefined ? {} : { onRetry: opts.onRetry }),
    });
  }

  /** Scheme, host and port of the first configured endpoint: safe to log. */
  get endpoint(): string {
    return this.rpc.endpoints[0] ?? '';
  }

  /** Scheme, host and port of every endpoint, in configured order. */
  get endpoints(): readonly string[] {
    return this.rpc.endpoints;
  }

  /** Scheme, host and port of every endpoint, best first: the order the next call tries them in. */
  endpointOrder(): string[] {
    return this.rpc.pool.order().map((t) => t.endpoint);
  }

  /** Closes pooled connections (the client stays usable; new calls open new ones). */
  close(): void {
    this.rpc.close();
  }

  getGenesisHash(limits?: CallLimits): Promise<string> {
    return this.call('getGenesisHash', [], shape.readGenesisHash, limits);
  }

  getLatestBlockhash(limits?: CallLimits): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    return this.call('getLatestBlockhash', [this.atCommitment()], shape.readLatestBlockhash, limits);
  }

  getBalance(address: string, limits?: CallLimits): Promise<number> {
    return this.call('getBalance', [address, this.atCommitment()], shape.readBalance, limits);
  }

  getFeeForMessage(messageBase64: string, limits?: CallLimits): Promise<number | null> {
    return this.call('getFeeForMessage', [messageBase64, this.atCommitment()], shape.readFee, limits);
  }

  simulateTransaction(
    txBase64: string,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; accounts: string[] },
    limits?: CallLimits,
  ): Promise<SimulationResult> {
    const config = {
      encoding: 'base64',
      sigVerify: opts.sigVerify,
      replaceRecentBlockhash: opts.replaceRecentBlockhash,
      commitment: this.commitment,
      accounts: { encoding: 'base64', addresses: opts.accounts },
    };
    const read = (r: unknown) => shape.readSimulation(r, opts.accounts.length);
    return this.call('simulateTransaction', [txBase64, config], read, limits);
  }

  /** Retried like a read: the same signed bytes carry the same signature, so a second copy cannot land twice. */
  sendTransaction(txBase64: string, limits?: CallLimits): Promise<string> {
    const config = { encoding: 'base64', skipPreflight: true, maxRetries: 0 };
    return this.call('sendTransaction', [txBase64, config], shape.readSignature, limits);
  }

  getSignatureStatuses(
    signatures: string[],
    opts: { searchTransactionHistory: boolean },
    limits?: CallLimits,
  ): Promise<(SignatureStatus | null)[]> {
    const params = [signatures, { searchTransactionHistory: opts.searchTransactionHistory }];
    return this.call('getSignatureStatuses', params, (r) => shape.readStatuses(r, signatures.length), limits);
  }

  getBlockHeight(commitment: Commitment, limits?: CallLimits): Promise<number> {
    return this.call('getBlockHeight', [{ commitment }], shape.readBlockHeight, limits);
  }

  getTransaction(signature: string, limits?: CallLimits): Promise<TransactionMeta | null> {
    const config = { encoding: 'json', commitment: this.commitment, maxSupportedTransactionVersion: 0 };
    return this.call('getTransaction', [signature, config], shape.readTransactionMeta, limits);
  }

  getSignaturesForAddress(
    address: string,
    opts: { limit: number; before?: string },
    limits?: CallLimits,
  ): Promise<AddressSignature[]> {
    const config = {
      commitment: this.commitment,
      limit: opts.limit,
      ...(opts.before === undefined ? {} : { before: opts.before }),
    };
    const read = (r: unknown) => shape.readAddressSignatures(r, opts.limit);
    return this.call('getSignaturesForAddress', [address, config], read, limits);
  }

  getMultipleAccounts(addresses: string[], limits?: CallLimits): Promise<(AccountSummary | null)[]> {
    const params = [addresses, { encoding: 'base64', commitment: this.commitment }];
    return this.call('getMultipleAccounts', params, (r) => shape.readAccounts(r, addresses.length), limits);
  }

  getAccountInfo(address: string, limits?: CallLimits): Promise<AccountSummary | null> {
    const params = [address, { encoding: 'base64', commitment: this.commitment }];
    return this.call('getAccountInfo', params, shape.readAccount, limits);
  }

  getAccountsAtSlot(addresses: string[], minContextSlot: number, limits?: CallLimits): Promise<AccountsAtSlot> {
    // With data: token balances are read from it. The simulation already returns the same accounts' data.
    const config = { encoding: 'base64', commitment: this.commitment, minContextSlot };
    const read = (r: unknown) => shape.readAccountsData(r, addresses.length);
    return this.call('getMultipleAccounts', [addresses, config], read, limits);
  }

  getAccountsData(addresses: string[], limits?: CallLimits): Promise<AccountsAtSlot> {
    const params = [addresses, { encoding: 'base64', commitment: this.commitment }];
    return this.call('getMultipleAccounts', params, (r) => shape.readAccountsData(r, addresses.length), limits);
  }

  isBlockhashValid(blockhash: string, limits?: CallLimits): Promise<boolean> {
    return this.call('isBlockhashValid', [blockhash, this.atCommitment()], shape.readBlockhashValid, limits);
  }

  /**
   * Asks a test cluster's faucet for lamports. Never retried: each request is a new transfer, and a request whose
   * answer was lost may already have been paid.
   */
  requestAirdrop(address: string, lamports: number, limits?: CallLimits): Promise<string> {
    return this.call('requestAirdrop', [address, lamports, this.atCommitment()], shape.readSignature, limits, {
      idempotent: false,
    });
  }

  private atCommitment(): { commitment: Commitment } {
    return { commitment: this.commitment };
  }

  private async call<T>(
    method: string,
    params: unknown[],
    read: (result: unknown) => T,
    limits: CallLimits | undefined,
    policy: { idempotent: boolean } = IDEMPOTENT,
  ): Promise<T> {
    const result = await this.rpc.call(method, params, { ...policy, ...(limits === undefined ? {} : { limits }) });
    try {
      return read(result);
    } catch (e) {
      if (e instanceof shape.ShapeProblem)
        throw new RpcError('shape', method, `${method}: unexpected response: ${e.message}`);
      throw e;
    }
  }
}
