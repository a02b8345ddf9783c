/**
 * The engine's view of a Solana cluster over plain JSON-RPC 2.0 (docs/reports.md "How a sign ends"): commitment `confirmed`
 * everywhere except the finalized-height read, base64 transactions, sends with skipPreflight and no node-side
 * retries (the engine rebroadcasts itself). Every result is shape-checked before it is believed.
 */
import { JsonRpcTransport, RpcError } from './json-rpc-transport';
import * as shape from './rpc-shapes';
import type { AccountSummary, ChainClient, SignatureStatus, SimulationResult, TransactionMeta } from './types';

export { RpcError, isRpcError, describeEndpoint } from './json-rpc-transport';

const CONFIRMED = { commitment: 'confirmed' } as const;

export interface RpcChainClientOptions {
  /** Deadline for each call, connection included (timings.rpc_timeout_ms, 15 s by default). */
  timeoutMs: number;
  fetchImpl?: never;
}

export class RpcChainClient implements ChainClient {
  private readonly transport: JsonRpcTransport;

  constructor(url: string, opts: RpcChainClientOptions) {
    this.transport = new JsonRpcTransport(url, opts.timeoutMs);
  }

  /** Scheme, host and port of the endpoint: safe to log. */
  get endpoint(): string {
    return this.transport.endpoint;
  }

  /** Closes pooled connections (the client stays usable; new calls open new ones). */
  close(): void {
    this.transport.close();
  }

  getGenesisHash(): Promise<string> {
    return this.call('getGenesisHash', [], shape.readGenesisHash);
  }

  getLatestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    return this.call('getLatestBlockhash', [CONFIRMED], shape.readLatestBlockhash);
  }

  getBalance(address: string): Promise<number> {
    return this.call('getBalance', [address, CONFIRMED], shape.readBalance);
  }

  getFeeForMessage(messageBase64: string): Promise<number | null> {
    return this.call('getFeeForMessage', [messageBase64, CONFIRMED], shape.readFee);
  }

  simulateTransaction(
    txBase64: string,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; accounts: string[] },
  ): Promise<SimulationResult> {
    const config = {
      encoding: 'base64',
      sigVerify: opts.sigVerify,
      replaceRecentBlockhash: opts.replaceRecentBlockhash,
      commitment: 'confirmed',
      accounts: { encoding: 'base64', addresses: opts.accounts },
    };
    return this.call('simulateTransaction', [txBase64, config], (r) => shape.readSimulation(r, opts.accounts.length));
  }

  sendTransaction(txBase64: string): Promise<string> {
    return this.call(
      'sendTransaction',
      [txBase64, { encoding: 'base64', skipPreflight: true, maxRetries: 0 }],
      shape.readSignature,
    );
  }

  getSignatureStatuses(
    signatures: string[],
    opts: { searchTransactionHistory: boolean },
  ): Promise<(SignatureStatus | null)[]> {
    const params = [signatures, { searchTransactionHistory: opts.searchTransactionHistory }];
    return this.call('getSignatureStatuses', params, (r) => shape.readStatuses(r, signatures.length));
  }

  getBlockHeight(commitment: 'confirmed' | 'finalized'): Promise<number> {
    return this.call('getBlockHeight', [{ commitment }], shape.readBlockHeight);
  }

  getTransaction(signature: string): Promise<TransactionMeta | null> {
    const config = { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 };
    return this.call('getTransaction', [signature, config], shape.readTransactionMeta);
  }

  getMultipleAccounts(addresses: string[]): Promise<(AccountSummary | null)[]> {
    const params = [addresses, { encoding: 'base64', commitment: 'confirmed' }];
    return this.call('getMultipleAccounts', params, (r) => shape.readAccounts(r, addresses.length));
  }

  getAccountInfo(address: string): Promise<AccountSummary | null> {
    return this.call('getAccountInfo', [address, { encoding: 'base64', commitment: 'confirmed' }], shape.readAccount);
  }

  private async call<T>(method: string, params: unknown[], read: (result: unknown) => T): Promise<T> {
    const result = await this.transport.call(method, params);
    try {
      return read(result);
    } catch (e) {
      if (e instanceof shape.ShapeProblem)
        throw new RpcError('shape', method, `${method}: unexpected response: ${e.message}`);
      throw e;
    }
  }
}
