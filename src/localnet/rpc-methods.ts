/**
 * The Solana JSON-RPC methods the localnet answers, with parameters read and results shaped as an Agave node
 * does (context objects, default commitment `finalized`, default transaction encoding base58, error codes).
 * State at every commitment is the latest state: only heights, context slots, statuses and getTransaction
 * visibility follow the commitment asked for.
 */
import { decodeBase58, encodeBase58 } from '../util/base58';
import type { AccountView, Commitment, LandedTransaction, LocalChain } from './chain';
import { RpcFault } from './chain';
import type { FaultState } from './faults';

const API_VERSION = '2.2.0';
const MAX_STATUS_SIGNATURES = 256;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_BASE58_ACCOUNT_DATA = 128;
/** Agave reports rent-exempt accounts with rentEpoch u64::MAX. */
const RENT_EXEMPT_EPOCH = 18446744073709551615;

export interface LocalnetHooks {
  advanceBlocks(n: number): void;
  stats(): unknown;
}

type Params = unknown[];
type Method = (params: Params) => unknown;

export class LocalnetRpc {
  readonly calls: Record<string, number> = {};
  private readonly methods: Record<string, Method>;
  private readonly controls: Record<string, Method>;

  constructor(
    private readonly chain: LocalChain,
    private readonly faults: FaultState,
    private readonly genesisHash: string,
    hooks: LocalnetHooks,
    private readonly controlsEnabled: boolean,
  ) {
    this.methods = {
      getGenesisHash: () => this.genesisHash,
      getHealth: () => 'ok',
      getVersion: () => ({
        'solana-core': `${API_VERSION} (sa-forge-signer localnet, litesvm 1.5.0)`,
        'feature-set': 0,
      }),
      getSlot: (p) => this.chain.slotAt(this.chain.heightAt(commitment(p[0]))),
      getBlockHeight: (p) => this.chain.heightAt(commitment(p[0])),
      getLatestBlockhash: (p) => this.withContext(p[0], this.chain.latestBlockhash()),
      isBlockhashValid: (p) => this.withContext(p[1], this.chain.isBlockhashValid(text(p, 0, 'blockhash'))),
      getBalance: (p) => this.withContext(p[1], this.chain.balance(text(p, 0, 'address'))),
      getAccountInfo: (p) => {
        const cfg = config(p[1]);
        const acc = this.chain.account(text(p, 0, 'address'));
        return this.withContext(p[1], acc && encodeAccount(acc, accountEncoding(cfg)));
      },
      getMultipleAccounts: (p) => {
        const addresses = textList(p, 0, 'addresses', MAX_MULTIPLE_ACCOUNTS);
        const encoding = accountEncoding(config(p[1]));
        const value = addresses.map((a) => {
          const acc = this.chain.account(a);
          return acc && encodeAccount(acc, encoding);
        });
        return this.withContext(p[1], value);
      },
      getMinimumBalanceForRentExemption: (p) =>
        this.chain.minimumBalanceForRentExemption(wholeNumber(p[0], 'data length')),
      getFeeForMessage: (p) =>
        this.withContext(p[1], this.chain.feeForMessage(binary(text(p, 0, 'message'), 'base64'))),
      simulateTransaction: (p) => {
        const cfg = config(p[1]);
        const tx = binary(text(p, 0, 'transaction'), transactionEncoding(cfg));
        const accounts = cfg['accounts'] === undefined ? null : config(cfg['accounts']);
        const addresses = accounts
          ? textList([accounts['addresses']], 0, 'accounts.addresses', MAX_MULTIPLE_ACCOUNTS)
          : [];
        const encoding = accounts ? accountEncoding(accounts) : 'base64';
        const sim = this.chain.simulate(tx, {
          sigVerify: flag(cfg['sigVerify'], 'sigVerify'),
          replaceRecentBlockhash: flag(cfg['replaceRecentBlockhash'], 'replaceRecentBlockhash'),
          addresses,
        });
        return this.withContext(p[1], {
          err: sim.err,
          logs: sim.logs,
          accounts: accounts && sim.accounts ? sim.accounts.map((a) => a && encodeAccount(a, encoding)) : null,
          unitsConsumed: sim.unitsConsumed,
          returnData: null,
          innerInstructions: null,
          replacementBlockhash: sim.replacementBlockhash,
          fee: sim.fee,
        });
      },
      sendTransaction: (p) => this.chain.send(binary(text(p, 0, 'transaction'), transactionEncoding(config(p[1])))),
      getSignatureStatuses: (p) => {
        const signatures = textList(p, 0, 'signatures', MAX_STATUS_SIGNATURES);
        const search = flag(config(p[1])['searchTransactionHistory'], 'searchTransactionHistory');
        const value = signatures.map((s) => {
          const st = this.chain.status(s, search);
          return st && { ...st, status: st.err === null ? { Ok: null } : { Err: st.err } };
        });
        return { context: this.context('processed'), value };
      },
      getTransaction: (p) => {
        const cfg = typeof p[1] === 'string' ? { encoding: p[1] } : config(p[1]);
        const level = commitment(cfg);
        if (level === 'processed') throw new RpcFault(-32602, 'Method does not support commitment below `confirmed`');
        const tx = this.chain.transaction(text(p, 0, 'signature'), level);
        return tx && encodeTransaction(tx, cfg);
      },
      requestAirdrop: (p) => this.chain.airdrop(text(p, 0, 'address'), wholeNumber(p[1], 'lamports')),
    };

    this.controls = {
      localnet_dropSends: (p) => this.faults.dropSends(flag(p[0], 'on')),
      localnet_expireAllBlockhashes: () => this.faults.expireAllBlockhashes(),
      localnet_freezeHeight: (p) => this.faults.freezeHeight(flag(p[0], 'on')),
      localnet_stallConfirmations: (p) => this.faults.stallConfirmations(flag(p[0], 'on')),
      localnet_failNext: (p) =>
        this.faults.failNext(wholeNumber(p[0], 'n'), p[1] === undefined ? undefined : text(p, 1, 'method')),
      localnet_clearFaults: () => this.faults.clear(),
      localnet_advanceBlocks: (p) => hooks.advanceBlocks(wholeNumber(p[0], 'n')),
      localnet_blockHeight: () => this.chain.blockHeight,
      localnet_stats: () => hooks.stats(),
    };
  }

  /** Answers one call; throws RpcFault for a JSON-RPC error. Control results are `null` when they return nothing. */
  call(method: string, rawParams: unknown): unknown {
    const params = paramList(rawParams);
    const control = this.controlsEnabled ? this.controls[method] : undefined;
    if (control) return control(params) ?? null;
    const handler = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    this.calls[handler ? method : '(unknown method)'] = (this.calls[handler ? method : '(unknown method)'] ?? 0) + 1;
    if (this.faults.takeFailure(method)) throw new RpcFault(-32603, 'Internal error');
    if (!handler) throw new RpcFault(-32601, 'Method not found');
    return handler(params);
  }

  private context(level: Commitment): { slot: number; apiVersion: string } {
    return { slot: this.chain.slotAt(this.chain.heightAt(level)), apiVersion: API_VERSION };
  }

  private withContext(
    rawConfig: unknown,
    value: unknown,
  ): { context: { slot: number; apiVersion: string }; value: unknown } {
    return { context: this.context(commitment(rawConfig)), value };
  }
}

// ---- parameter readers: a wrong parameter is -32602 as on a node ----

function invalid(message: string): RpcFault {
  return new RpcFault(-32602, `Invalid params: ${message}`);
}

function paramList(raw: unknown): Params {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw invalid('params must be an array');
  return raw;
}

function config(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('the configuration must be an object');
  return raw as Record<string, unknown>;
}

function commitment(raw: unknown): Commitment {
  const level = config(raw)['commitment'] ?? 'finalized';
  if (level === 'processed' || level === 'confirmed' || level === 'finalized') return level;
  throw invalid(`unknown commitment ${JSON.stringify(level)}`);
}

function text(p: Params, i: number, name: string): string {
  const v = p[i];
  if (typeof v !== 'string') throw invalid(`${name} must be a string`);
  return v;
}

function textList(p: Params, i: number, name: string, max: number): string[] {
  const v = p[i];
  if (!Array.isArray(v) || !v.every((s): s is string => typeof s === 'string'))
    throw invalid(`${name} must be an array of strings`);
  if (v.length > max) throw invalid(`Too many inputs provided; max ${max}`);
  return v;
}

function flag(v: unknown, name: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw invalid(`${name} must be a boolean`);
  return v;
}

function wholeNumber(v: unknown, name: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw invalid(`${name} must be a whole number`);
  return v;
}

function transactionEncoding(cfg: Record<string, unknown>): 'base58' | 'base64' {
  const e = cfg['encoding'] ?? 'base58';
  if (e === 'base58' || e === 'base64') return e;
  throw invalid(`unsupported encoding: ${JSON.stringify(e)}. Supported encodings: base58, base64`);
}

function accountEncoding(cfg: Record<string, unknown>): 'base58' | 'base64' {
  const e = cfg['encoding'] ?? 'base58';
  if (e === 'base58' || e === 'base64') return e;
  throw invalid(`unsupported account encoding ${JSON.stringify(e)}; this localnet answers base58 and base64`);
}

function binary(value: string, encoding: 'base58' | 'base64'): Uint8Array {
  if (encoding === 'base58') {
    const bytes = decodeBase58(value);
    if (!bytes) throw new RpcFault(-32602, 'invalid base58 encoding');
    return bytes;
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 !== 0)
    throw new RpcFault(-32602, 'invalid base64 encoding');
  return new Uint8Array(Buffer.from(value, 'base64'));
}

// ---- result encoders ----

function encodeAccount(acc: AccountView, encoding: 'base58' | 'base64'): Record<string, unknown> {
  if (encoding === 'base58' && acc.data.length > MAX_BASE58_ACCOUNT_DATA) {
    throw new RpcFault(
      -32600,
      'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
    );
  }
  const data = encoding === 'base64' ? Buffer.from(acc.data).toString('base64') : encodeBase58(acc.data);
  return {
    data: [data, encoding],
    executable: acc.executable,
    lamports: acc.lamports,
    owner: acc.owner,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: acc.data.length,
  };
}

function encodeTransaction(landed: LandedTransaction, cfg: Record<string, unknown>): Record<string, unknown> {
  const { tx } = landed;
  const maxVersion = cfg['maxSupportedTransactionVersion'];
  if (tx.version === 0 && maxVersion !== 0) {
    throw new RpcFault(
      -32015,
      'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
    );
  }
  const encoding = cfg['encoding'] ?? 'json';
  let transaction: unknown;
  if (encoding === 'base64') {
    transaction = [Buffer.from(tx.bytes).toString('base64'), 'base64'];
  } else if (encoding === 'json') {
    transaction = {
      signatures: tx.signatures.map(encodeBase58),
      message: {
        accountKeys: tx.accountKeys,
        header: {
          numRequiredSignatures: tx.numRequiredSignatures,
          numReadonlySignedAccounts: tx.numReadonlySigned,
          numReadonlyUnsignedAccounts: tx.numReadonlyUnsigned,
        },
        recentBlockhash: tx.recentBlockhash,
        instructions: tx.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: ix.accounts,
          data: encodeBase58(ix.data),
          stackHeight: null,
        })),
        ...(tx.version === 0 ? { addressTableLookups: tx.addressTableLookups } : {}),
      },
    };
  } else {
    throw invalid(
      `unsupported transaction encoding ${JSON.stringify(encoding)}; this localnet answers json and base64`,
    );
  }
  return {
    slot: landed.slot,
    blockTime: landed.blockTime,
    meta: {
      err: landed.err,
      status: landed.err === null ? { Ok: null } : { Err: landed.err },
      fee: landed.fee,
      preBalances: landed.preBalances,
      postBalances: landed.postBalances,
      innerInstructions: [],
      logMessages: landed.logs,
      preTokenBalances: [],
      postTokenBalances: [],
      rewards: [],
      loadedAddresses: { writable: [], readonly: [] },
      computeUnitsConsumed: landed.unitsConsumed,
    },
    transaction,
    ...(maxVersion === undefined ? {} : { version: tx.version }),
  };
}
