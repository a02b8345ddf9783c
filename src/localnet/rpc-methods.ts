/**
 * The Solana JSON-RPC methods the localnet answers, with parameters read and results shaped as an Agave node
 * does (context objects, default commitment `finalized`, default transaction encoding base58, error codes).
 * State at every commitment is the latest state: only heights, context slots, statuses and getTransaction
 * visibility follow the commitment asked for.
 */
import { decodeBase58, encodeBase58 } from '../util/base58';
import type { AccountView } from './account-view';
import type { Commitment, InnerInstructionGroup, LandedTransaction, EmbeddedChain } from './embedded-chain';
import { MAX_SIGNATURES_FOR_ADDRESS, RpcFault } from './embedded-chain';
import type { FaultState } from './faults';
import { parsedAccountData, readTokenAccount, tokenAmount, type MintLookup } from './parsed-accounts';
import type { LocalPrice, WrittenPrice } from './prices';

const API_VERSION = '2.2.0';
const MAX_STATUS_SIGNATURES = 256;
const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_BASE58_ACCOUNT_DATA = 128;
/** Agave reports rent-exempt accounts with rentEpoch u64::MAX. */
// eslint-disable-next-line no-loss-of-precision -- a node writes u64::MAX; JSON.stringify can only write the nearest double
const RENT_EXEMPT_EPOCH = 18446744073709551615;

export interface LocalnetHooks {
  advanceBlocks(n: number): void;
  stats(): unknown;
  /** Writes a price account (prices.ts): straight, or through the keeper that keeps it fresh. */
  setPrice(price: LocalPrice): WrittenPrice;
}

type Params = unknown[];
type Method = (params: Params) => unknown;

export class LocalnetRpc {
  readonly calls: Record<string, number> = {};
  private readonly methods: Record<string, Method>;
  private readonly controls: Record<string, Method>;

  constructor(
    private readonly chain: EmbeddedChain,
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
        return this.withContext(p[1], acc && encodeAccount(acc, accountEncoding(cfg), this.mints));
      },
      getMultipleAccounts: (p) => {
        const addresses = textList(p, 0, 'addresses', MAX_MULTIPLE_ACCOUNTS);
        const encoding = accountEncoding(config(p[1]));
        const value = addresses.map((a) => {
          const acc = this.chain.account(a);
          return acc && encodeAccount(acc, encoding, this.mints);
        });
        return this.withContext(p[1], value);
      },
      getTokenAccountBalance: (p) => {
        const address = text(p, 0, 'address');
        const acc = this.chain.account(address);
        const token = acc && readTokenAccount(acc.owner, acc.data);
        if (!token) throw new RpcFault(-32602, 'Invalid param: not a Token account');
        const decimals = this.chain.mint(token.mint)?.decimals;
        if (decimals === undefined) throw new RpcFault(-32602, 'Invalid param: mint could not be unpacked');
        return this.withContext(p[1], tokenAmount(token.amount, decimals));
      },
      getTokenAccountsByOwner: (p) => {
        const owner = text(p, 0, 'owner');
        const filter = config(p[1]);
        const mint = filter['mint'];
        const programId = filter['programId'];
        if ((typeof mint === 'string') === (typeof programId === 'string'))
          throw invalid('the filter must be either {"mint": ADDRESS} or {"programId": ADDRESS}');
        const encoding = accountEncoding(config(p[2]));
        const found = this.chain.tokenAccountsByOwner(owner, {
          ...(typeof mint === 'string' ? { mint } : {}),
          ...(typeof programId === 'string' ? { programId } : {}),
        });
        const value = found.map((f) => ({
          pubkey: f.address,
          account: encodeAccount(f.account, encoding, this.mints),
        }));
        return this.withContext(p[2], value);
      },
      getSignaturesForAddress: (p) => {
        const cfg = config(p[1]);
        const level = commitment(cfg);
        if (level === 'processed') throw new RpcFault(-32602, 'Method does not support commitment below `confirmed`');
        const limit = cfg['limit'] === undefined ? MAX_SIGNATURES_FOR_ADDRESS : wholeNumber(cfg['limit'], 'limit');
        if (limit < 1 || limit > MAX_SIGNATURES_FOR_ADDRESS)
          throw invalid(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`);
        const before = optionalText(cfg['before'], 'before');
        const until = optionalText(cfg['until'], 'until');
        return this.chain
          .signaturesFor(text(p, 0, 'address'), {
            limit,
            commitment: level,
            ...(before === undefined ? {} : { before }),
            ...(until === undefined ? {} : { until }),
          })
          .map((sig) => ({ ...sig, memo: null }));
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
        const wantInner = flag(cfg['innerInstructions'], 'innerInstructions');
        const sim = this.chain.simulate(tx, {
          sigVerify: flag(cfg['sigVerify'], 'sigVerify'),
          replaceRecentBlockhash: flag(cfg['replaceRecentBlockhash'], 'replaceRecentBlockhash'),
          addresses,
        });
        return this.withContext(p[1], {
          err: sim.err,
          logs: sim.logs,
          accounts:
            accounts && sim.accounts ? sim.accounts.map((a) => a && encodeAccount(a, encoding, this.mints)) : null,
          unitsConsumed: sim.unitsConsumed,
          returnData: null,
          innerInstructions: wantInner ? partiallyDecodedInner(sim.innerInstructions, sim.accountKeys) : null,
          replacementBlockhash: sim.replacementBlockhash,
          fee: sim.fee,
          preBalances: sim.preBalances,
          postBalances: sim.err === null ? sim.postBalances : null,
          preTokenBalances: sim.preTokenBalances,
          postTokenBalances: sim.postTokenBalances,
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
      // Not a node's method: how a developer or a test prices an asset on this chain (`localnet price set`), served
      // like requestAirdrop, since the chain has no other way to get a Pyth price.
      localnet_setPrice: (p) => {
        const cfg = config(p[0]);
        const partial = cfg['partial_signatures'];
        return hooks.setPrice({
          account: text([cfg['account']], 0, 'account'),
          feedId: text([cfg['feed_id']], 0, 'feed_id'),
          price: text([cfg['price']], 0, 'price'),
          conf: text([cfg['conf']], 0, 'conf'),
          ageS: cfg['age_s'] === undefined ? 0 : wholeNumber(cfg['age_s'], 'age_s'),
          ...(partial === undefined
            ? {}
            : { verification: { __kind: 'Partial', numSignatures: wholeNumber(partial, 'partial_signatures') } }),
          ...(cfg['owner'] === undefined ? {} : { owner: text([cfg['owner']], 0, 'owner') }),
        });
      },
    };

    this.controls = {
      localnet_dropSends: (p) => this.faults.dropSends(flag(p[0], 'on')),
      localnet_expireAllBlockhashes: () => this.faults.expireAllBlockhashes(),
      localnet_freezeHeight: (p) => this.faults.freezeHeight(flag(p[0], 'on')),
      localnet_stallConfirmations: (p) => this.faults.stallConfirmations(flag(p[0], 'on')),
      localnet_failNext: (p) =>
        this.faults.failNext(wholeNumber(p[0], 'n'), p[1] === undefined ? undefined : text(p, 1, 'method')),
      localnet_cutSockets: (p) => this.faults.cutSockets(flag(p[0], 'on')),
      localnet_dropNotifications: (p) => this.faults.dropNotifications(flag(p[0], 'on')),
      localnet_falseNotifications: (p) => this.faults.falseNotifications(flag(p[0], 'on')),
      localnet_restartWebSocket: () => this.faults.restartWebSocket(),
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
    // Named, so a client meeting a method this localnet does not serve learns which one.
    if (!handler) throw new RpcFault(-32601, `Method not found: ${method.slice(0, 64)}`);
    return handler(params);
  }

  private readonly mints: MintLookup = (mint) => this.chain.mint(mint);

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

function optionalText(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalid(`${name} must be a string`);
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

type AccountEncoding = 'base58' | 'base64' | 'jsonParsed';

function accountEncoding(cfg: Record<string, unknown>): AccountEncoding {
  const e = cfg['encoding'] ?? 'base58';
  if (e === 'base58' || e === 'base64' || e === 'jsonParsed') return e;
  throw invalid(
    `unsupported account encoding ${JSON.stringify(e)}; this localnet answers base58, base64 and jsonParsed`,
  );
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

/** jsonParsed falls back to base64 for an account no parser knows, as a node does. */
function encodeAccount(acc: AccountView, encoding: AccountEncoding, mints: MintLookup): Record<string, unknown> {
  if (encoding === 'jsonParsed') {
    const parsed = parsedAccountData(acc.owner, acc.data, mints);
    if (parsed) return { ...accountFields(acc), data: parsed };
    return encodeAccount(acc, 'base64', mints);
  }
  if (encoding === 'base58' && acc.data.length > MAX_BASE58_ACCOUNT_DATA) {
    throw new RpcFault(
      -32600,
      'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
    );
  }
  const data = encoding === 'base64' ? Buffer.from(acc.data).toString('base64') : encodeBase58(acc.data);
  return { ...accountFields(acc), data: [data, encoding] };
}

function accountFields(acc: AccountView): Record<string, unknown> {
  return {
    executable: acc.executable,
    lamports: acc.lamports,
    owner: acc.owner,
    rentEpoch: RENT_EXEMPT_EPOCH,
    space: acc.data.length,
  };
}

/** Inner instructions in the `json` form: indices into the full account list, data in base58. */
function compiledInner(groups: InnerInstructionGroup[]): unknown[] {
  return groups.map((g) => ({
    index: g.index,
    instructions: g.instructions.map((ix) => ({
      programIdIndex: ix.programIdIndex,
      accounts: ix.accounts,
      data: encodeBase58(ix.data),
      stackHeight: ix.stackHeight,
    })),
  }));
}

/** Inner instructions in the form a node gives for programs it has no parser for: addresses named, data base58. */
function partiallyDecodedInner(groups: InnerInstructionGroup[], keys: string[]): unknown[] {
  return groups.map((g) => ({
    index: g.index,
    instructions: g.instructions.map((ix) => ({
      programId: keys[ix.programIdIndex],
      accounts: ix.accounts.map((i) => keys[i]),
      data: encodeBase58(ix.data),
      stackHeight: ix.stackHeight,
    })),
  }));
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
  } else if (encoding === 'jsonParsed') {
    transaction = { signatures: tx.signatures.map(encodeBase58), message: parsedMessage(landed) };
  } else {
    throw invalid(
      `unsupported transaction encoding ${JSON.stringify(encoding)}; this localnet answers json, jsonParsed and base64`,
    );
  }
  const keys = [...tx.accountKeys, ...landed.loadedAddresses.writable, ...landed.loadedAddresses.readonly];
  return {
    slot: landed.slot,
    blockTime: landed.blockTime,
    meta: {
      err: landed.err,
      status: landed.err === null ? { Ok: null } : { Err: landed.err },
      fee: landed.fee,
      preBalances: landed.preBalances,
      postBalances: landed.postBalances,
      innerInstructions:
        encoding === 'jsonParsed'
          ? partiallyDecodedInner(landed.innerInstructions, keys)
          : compiledInner(landed.innerInstructions),
      logMessages: landed.logs,
      preTokenBalances: landed.preTokenBalances,
      postTokenBalances: landed.postTokenBalances,
      rewards: [],
      loadedAddresses: landed.loadedAddresses,
      computeUnitsConsumed: landed.unitsConsumed,
    },
    transaction,
    ...(maxVersion === undefined ? {} : { version: tx.version }),
  };
}

/**
 * A message in the jsonParsed form: every account with its signer and writable flags and where it came from, and
 * each instruction partially decoded (program and accounts named, data base58), as a node gives it for programs
 * it has no parser for.
 */
function parsedMessage(landed: LandedTransaction): Record<string, unknown> {
  const { tx, loadedAddresses } = landed;
  const unsignedStatic = tx.accountKeys.length - tx.numRequiredSignatures;
  const writableStatic = (i: number): boolean =>
    i < tx.numRequiredSignatures
      ? i < tx.numRequiredSignatures - tx.numReadonlySigned
      : i - tx.numRequiredSignatures < unsignedStatic - tx.numReadonlyUnsigned;
  const accountKeys = [
    ...tx.accountKeys.map((pubkey, i) => ({
      pubkey,
      signer: i < tx.numRequiredSignatures,
      writable: writableStatic(i),
      source: 'transaction',
    })),
    ...loadedAddresses.writable.map((pubkey) => ({ pubkey, signer: false, writable: true, source: 'lookupTable' })),
    ...loadedAddresses.readonly.map((pubkey) => ({ pubkey, signer: false, writable: false, source: 'lookupTable' })),
  ];
  const keys = accountKeys.map((k) => k.pubkey);
  return {
    accountKeys,
    recentBlockhash: tx.recentBlockhash,
    instructions: tx.instructions.map((ix) => ({
      programId: keys[ix.programIdIndex],
      accounts: ix.accounts.map((i) => keys[i]),
      data: encodeBase58(ix.data),
      stackHeight: null,
    })),
    ...(tx.version === 0 ? { addressTableLookups: tx.addressTableLookups } : {}),
  };
}
