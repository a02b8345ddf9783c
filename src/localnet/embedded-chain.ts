/**
 * A single-node chain over LiteSVM with the parts LiteSVM lacks and a signer depends on: block heights that
 * advance, one blockhash per block that stays valid for 150 blocks, transactions that land in the current
 * block and then move processed → confirmed → finalized, a status history, and fee/balance metadata.
 *
 * LiteSVM executes; this class decides what a node would decide around execution. LiteSVM's own blockhash
 * check is turned off because it only knows its latest hash: validity is tracked here instead.
 *
 * Uses litesvm's napi binding (`litesvm/dist/internal`) directly rather than the kit-based wrapper: the RPC
 * already has the wire bytes, and the wrapper would decode them into kit objects only to re-encode them.
 */
import {
  Account,
  FailedTransactionMetadata,
  LiteSvm,
  TransactionMetadata,
  type Account as LiteSvmAccount,
} from 'litesvm/dist/internal';
import { decodeAddress, decodeBase58, encodeBase58 } from '../util/base58';
import { transactionFee } from './fees';
import { isTokenProgram, readLookupTable, readMint, readTokenAccount, type MintInfo } from './parsed-accounts';
import type { AccountView } from './account-view';
import { tokenBalances, type TokenBalance } from './token-balances';
import { transactionErrorJson, type TransactionErrorJson } from './tx-error';
import { parseWireMessage, parseWireTransaction, signatureOf, WireError, type WireTransaction } from './wire';

/** A blockhash can be used for this many blocks after the block that issued it (MAX_PROCESSING_AGE). */
export const BLOCKHASH_VALID_BLOCKS = 150;
/** Without searchTransactionHistory a node answers from its status cache, which spans about this many blocks. */
export const STATUS_CACHE_BLOCKS = 300;
/** How many landed transactions are kept for status and getTransaction lookups. */
const HISTORY_LIMIT = 200_000;
/** Slots run ahead of block heights as on a real cluster, so code that mixes the two up is caught. */
const SLOT_LEAD = 3_000;
const FIRST_BLOCK_HEIGHT = 1_000;
const SIGNATURE_FAILURE = 11;
/** The SlotHashes sysvar holds this many recent slots (MAX_ENTRIES). */
const SLOT_HASHES_KEPT = 512;
/** getSignaturesForAddress answers at most this many per call, as a node does. */
export const MAX_SIGNATURES_FOR_ADDRESS = 1000;

export type Commitment = 'processed' | 'confirmed' | 'finalized';

export interface ChainSettings {
  confirmAfterBlocks: number;
  finalizeAfterBlocks: number;
}

/** A JSON-RPC error a node would answer with (code and message as a node words them). */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** An instruction a program invoked (CPI), with indices into the transaction's full account list. */
export interface InnerInstructionView {
  programIdIndex: number;
  accounts: number[];
  data: Uint8Array;
  stackHeight: number;
}

/** Inner instructions grouped by the top-level instruction that made them, as a node reports them. */
export interface InnerInstructionGroup {
  index: number;
  instructions: InnerInstructionView[];
}

export interface LoadedAddresses {
  writable: string[];
  readonly: string[];
}

export interface SimulationOutcome {
  err: TransactionErrorJson | null;
  logs: string[];
  unitsConsumed: number;
  accounts: (AccountView | null)[] | null;
  fee: number | null;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
  innerInstructions: InnerInstructionGroup[];
  /** Every account of the transaction, static then loaded: what inner instruction indices refer to. */
  accountKeys: string[];
  /** Lamports of every account in `accountKeys` before and after (empty after when it did not run). */
  preBalances: number[];
  postBalances: number[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
}

export interface LandedTransaction {
  signature: string;
  slot: number;
  height: number;
  /** Unix seconds when it landed. */
  blockTime: number;
  err: TransactionErrorJson | null;
  fee: number;
  preBalances: number[];
  postBalances: number[];
  logs: string[];
  unitsConsumed: number;
  tx: WireTransaction;
  loadedAddresses: LoadedAddresses;
  innerInstructions: InnerInstructionGroup[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
}

export interface SignatureInfo {
  signature: string;
  slot: number;
  err: TransactionErrorJson | null;
  blockTime: number;
  confirmationStatus: Commitment;
}

export interface StatusView {
  slot: number;
  confirmations: number | null;
  err: TransactionErrorJson | null;
  confirmationStatus: Commitment;
}

export class EmbeddedChain {
  private readonly svm = new LiteSvm();
  private height = FIRST_BLOCK_HEIGHT;
  private latest: string;
  /** Issued blockhash → the height of the block that issued it, oldest first. */
  private readonly blockhashes = new Map<string, number>();
  private readonly landed = new Map<string, LandedTransaction>();
  /** Landed signatures per account they touched, oldest first (getSignaturesForAddress). */
  private readonly signaturesByAddress = new Map<string, string[]>();
  /** Every address the chain has seen an account for: LiteSVM cannot list its accounts, token queries scan these. */
  private readonly knownAddresses = new Set<string>();
  /** The SlotHashes sysvar's entries, newest first, one per block the chain has reported. */
  private slotHashes: { slot: bigint; hash: string }[] = [];
  private dropSends = false;
  private stalled = false;
  /** Told whenever a status may have moved: a block, a landed send, the end of a stall (the WebSocket's notices). */
  private readonly statusListeners = new Set<() => void>();
  sends = 0;

  constructor(
    private readonly settings: ChainSettings,
    /** The host's time in ms: the Clock sysvar follows it, block by block. */
    private readonly now: () => number = Date.now,
  ) {
    // The faucet behind airdrop starts with far more than any test or operator will hand out (2^62 lamports).
    this.svm.setLamports(1n << 62n);
    this.svm.setBlockhashCheck(false);
    this.svm.warpToSlot(BigInt(this.slot));
    this.followHostClock();
    this.latest = this.svm.latestBlockhash();
    this.blockhashes.set(this.latest, this.height);
    this.recordSlotHash();
  }

  get blockHeight(): number {
    return this.height;
  }

  get slot(): number {
    return this.slotAt(this.height);
  }

  slotAt(height: number): number {
    return height + SLOT_LEAD;
  }

  heightAt(commitment: Commitment): number {
    if (commitment === 'finalized') return this.height - this.settings.finalizeAfterBlocks;
    if (commitment === 'confirmed') return this.height - this.settings.confirmAfterBlocks;
    return this.height;
  }

  advanceBlocks(n: number): void {
    for (let i = 0; i < n; i++) {
      this.height++;
      this.svm.expireBlockhash();
      this.svm.warpToSlot(BigInt(this.slot));
      this.followHostClock();
      this.issueBlockhash();
    }
    this.pruneBlockhashes();
    this.statusesMoved();
  }

  /**
   * The Clock sysvar's `unix_timestamp`, which programs and price checks read as the cluster's time. It follows the
   * host's clock at each block, as a real cluster's follows its validators' (LiteSVM alone would leave it at 0).
   */
  get clockTime(): bigint {
    return this.svm.getClock().unixTimestamp;
  }

  private followHostClock(): void {
    const clock = this.svm.getClock();
    clock.unixTimestamp = BigInt(Math.floor(this.now() / 1000));
    this.svm.setClock(clock);
  }

  /** Calls `listener` whenever a signature's status may have changed; returns the way to stop. */
  onStatusesMoved(listener: () => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  private statusesMoved(): void {
    for (const listener of this.statusListeners) listener();
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: number } {
    return {
      blockhash: this.latest,
      lastValidBlockHeight: (this.blockhashes.get(this.latest) ?? this.height) + BLOCKHASH_VALID_BLOCKS,
    };
  }

  isBlockhashValid(blockhash: string): boolean {
    const issued = this.blockhashes.get(blockhash);
    return issued !== undefined && this.height <= issued + BLOCKHASH_VALID_BLOCKS;
  }

  // ---- faults ----

  setDropSends(on: boolean): void {
    this.dropSends = on;
  }

  setStalled(on: boolean): void {
    this.stalled = on;
    this.statusesMoved();
  }

  /** Every blockhash issued so far stops being valid; a fresh one is issued in the current block. */
  expireAllBlockhashes(): void {
    this.blockhashes.clear();
    this.svm.expireBlockhash();
    this.issueBlockhash();
  }

  // ---- accounts ----

  account(address: string): AccountView | null {
    const acc = this.svm.getAccount(addressBytes(address));
    // A node reports an account with no lamports as absent.
    return acc && acc.lamports() > 0n ? accountView(acc) : null;
  }

  balance(address: string): number {
    return Number(this.svm.getBalance(addressBytes(address)) ?? 0n);
  }

  airdrop(address: string, lamports: number): string {
    const result = this.svm.airdrop(addressBytes(address), BigInt(lamports));
    this.knownAddresses.add(address);
    if (!(result instanceof TransactionMetadata)) {
      const why = result ? JSON.stringify(transactionErrorJson(result.err())) : 'no result';
      throw new RpcFault(-32603, `airdrop failed: ${why}`);
    }
    return encodeBase58(result.signature());
  }

  setAccount(address: string, acc: { lamports: number; owner: string; data?: Uint8Array; executable?: boolean }): void {
    const owner = decodeAddress(acc.owner);
    if (!owner) throw new RpcFault(-32602, 'Invalid param: owner is not an address');
    this.knownAddresses.add(address);
    this.svm.setAccount(
      addressBytes(address),
      new Account(BigInt(acc.lamports), acc.data ?? new Uint8Array(0), owner, acc.executable ?? false, 0n),
    );
  }

  /** A mint's fields, for parsing token accounts (decimals) the way a node does. */
  mint(address: string): MintInfo | null {
    const acc = decodeAddress(address) ? this.account(address) : null;
    return acc ? readMint(acc.owner, acc.data) : null;
  }

  /** Token accounts owned by `owner` among the accounts this chain has seen, optionally of one mint or program. */
  tokenAccountsByOwner(
    owner: string,
    filter: { mint?: string; programId?: string },
  ): { address: string; account: AccountView }[] {
    const out: { address: string; account: AccountView }[] = [];
    for (const address of this.knownAddresses) {
      const account = this.account(address);
      if (!account || !isTokenProgram(account.owner)) continue;
      if (filter.programId !== undefined && account.owner !== filter.programId) continue;
      const token = readTokenAccount(account.owner, account.data);
      if (!token || token.owner !== owner) continue;
      if (filter.mint !== undefined && token.mint !== filter.mint) continue;
      out.push({ address, account });
    }
    return out;
  }

  /** Landed transactions that touched `address`, newest first, as getSignaturesForAddress pages them. */
  signaturesFor(
    address: string,
    opts: { limit: number; before?: string; until?: string; commitment: 'confirmed' | 'finalized' },
  ): SignatureInfo[] {
    const all = this.signaturesByAddress.get(address) ?? [];
    const out: SignatureInfo[] = [];
    let started = opts.before === undefined;
    for (const signature of [...all].reverse()) {
      if (out.length >= opts.limit) break;
      if (!started) {
        started = signature === opts.before;
        continue;
      }
      if (signature === opts.until) break;
      const tx = this.transaction(signature, opts.commitment);
      if (!tx) continue;
      out.push({
        signature,
        slot: tx.slot,
        err: tx.err,
        blockTime: tx.blockTime,
        confirmationStatus: this.commitmentOf(tx),
      });
    }
    return out;
  }

  minimumBalanceForRentExemption(dataLength: number): number {
    return Number(this.svm.minimumBalanceForRentExemption(BigInt(dataLength)));
  }

  // ---- transactions ----

  feeForMessage(message: Uint8Array): number | null {
    const tx = parseOrFault(() => parseWireMessage(message));
    return this.isBlockhashValid(tx.recentBlockhash) ? transactionFee(tx) : null;
  }

  simulate(
    bytes: Uint8Array,
    opts: { sigVerify: boolean; replaceRecentBlockhash: boolean; addresses: string[] },
  ): SimulationOutcome {
    if (opts.sigVerify && opts.replaceRecentBlockhash) {
      throw new RpcFault(-32602, 'sigVerify may not be used with replaceRecentBlockhash');
    }
    const addressKeys = opts.addresses.map(addressBytes);
    let tx = parseOrFault(() => parseWireTransaction(bytes));
    let replacementBlockhash: SimulationOutcome['replacementBlockhash'] = null;
    if (opts.replaceRecentBlockhash) {
      replacementBlockhash = this.latestBlockhash();
      const copy = Uint8Array.from(tx.bytes);
      copy.set(decodeBase58(replacementBlockhash.blockhash) ?? new Uint8Array(32), tx.blockhashOffset);
      tx = parseWireTransaction(copy);
    }
    const loaded = this.loadedAddresses(tx);
    const accountKeys = [...tx.accountKeys, ...loaded.writable, ...loaded.readonly];
    const preTokenBalances = tokenBalances(
      accountKeys.map((a) => this.account(a)),
      (m) => this.mint(m),
    );
    // Read from the same state the simulation runs on, as a node reports them.
    const preBalances = accountKeys.map((a) => this.balance(a));
    const result = this.execute(tx, opts.sigVerify);
    const signatureFailure = result instanceof FailedTransactionMetadata && Number(result.err()) === SIGNATURE_FAILURE;
    // A node verifies signatures (when asked) before anything else, then refuses an unknown blockhash
    // before executing: no logs, no units, no accounts.
    if (opts.sigVerify && signatureFailure) throw new RpcFault(-32003, 'Transaction signature verification failure');
    if (!opts.replaceRecentBlockhash && !this.isBlockhashValid(tx.recentBlockhash)) {
      return {
        err: 'BlockhashNotFound',
        logs: [],
        unitsConsumed: 0,
        accounts: null,
        fee: null,
        replacementBlockhash,
        innerInstructions: [],
        accountKeys,
        preBalances,
        postBalances: [],
        preTokenBalances,
        postTokenBalances: [],
      };
    }

    if (result instanceof FailedTransactionMetadata) {
      const err = result.err();
      const meta = result.meta();
      return {
        err: transactionErrorJson(err),
        logs: meta.logs(),
        unitsConsumed: Number(meta.computeUnitsConsumed()),
        accounts: null,
        fee: null,
        replacementBlockhash,
        innerInstructions: innerInstructionGroups(meta),
        accountKeys,
        preBalances,
        postBalances: [],
        preTokenBalances,
        postTokenBalances: [],
      };
    }
    const post = new Map<string, LiteSvmAccount>();
    for (const entry of result.postAccounts()) post.set(encodeBase58(entry.address), entry.account());
    const after = (address: string, bytes?: Uint8Array): AccountView | null => {
      const acc = post.get(address) ?? this.svm.getAccount(bytes ?? addressBytes(address));
      return acc && acc.lamports() > 0n ? accountView(acc) : null;
    };
    const accounts = opts.addresses.map((address, i) => after(address, addressKeys[i]));
    const meta = result.meta();
    const postMints = (m: string): MintInfo | null => {
      const acc = after(m);
      return acc ? readMint(acc.owner, acc.data) : null;
    };
    return {
      err: null,
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      accounts,
      fee: transactionFee(tx),
      replacementBlockhash,
      innerInstructions: innerInstructionGroups(meta),
      accountKeys,
      preBalances,
      postBalances: accountKeys.map((a) => after(a)?.lamports ?? 0),
      preTokenBalances,
      postTokenBalances: tokenBalances(
        accountKeys.map((a) => after(a)),
        postMints,
      ),
    };
  }

  /** Simulates; LiteSVM refuses unsigned transactions while sigverify is on, so the flag is flipped for this call only. */
  private execute(tx: WireTransaction, sigVerify: boolean): ReturnType<LiteSvm['simulateLegacyTransaction']> {
    this.svm.setSigverify(sigVerify);
    try {
      return tx.version === 'legacy'
        ? this.svm.simulateLegacyTransaction(tx.bytes)
        : this.svm.simulateVersionedTransaction(tx.bytes);
    } finally {
      this.svm.setSigverify(true);
    }
  }

  /**
   * Accepts a transaction as a node does with skipPreflight: the signature comes back at once, whether or not
   * the transaction can land. One with an unknown or expired blockhash, a bad signature or an unpayable fee
   * is dropped and never gets a status. A repeat of a landed signature changes nothing.
   */
  send(bytes: Uint8Array): string {
    const tx = parseOrFault(() => parseWireTransaction(bytes));
    const signature = signatureOf(tx);
    this.sends++;
    if (this.landed.has(signature) || this.dropSends || !this.isBlockhashValid(tx.recentBlockhash)) return signature;

    const preBalances = this.balances(tx);
    const loadedAddresses = this.loadedAddresses(tx);
    const allKeys = [...tx.accountKeys, ...loadedAddresses.writable, ...loadedAddresses.readonly];
    const mintOf = (m: string) => this.mint(m);
    const preTokenBalances = tokenBalances(
      allKeys.map((a) => this.account(a)),
      mintOf,
    );
    const result =
      tx.version === 'legacy' ? this.svm.sendLegacyTransaction(tx.bytes) : this.svm.sendVersionedTransaction(tx.bytes);
    // A failed transaction landed (and paid its fee) exactly when LiteSVM committed it to its history.
    const first = tx.signatures[0];
    const committed =
      result instanceof TransactionMetadata || (first !== undefined && this.svm.getTransaction(first) !== null);
    if (!committed) return signature;

    const meta = result instanceof TransactionMetadata ? result : result.meta();
    this.record({
      signature,
      slot: this.slot,
      height: this.height,
      blockTime: Math.floor(Date.now() / 1000),
      err: result instanceof FailedTransactionMetadata ? transactionErrorJson(result.err()) : null,
      fee: transactionFee(tx),
      preBalances,
      postBalances: this.balances(tx),
      logs: meta.logs(),
      unitsConsumed: Number(meta.computeUnitsConsumed()),
      tx,
      loadedAddresses,
      innerInstructions: innerInstructionGroups(meta),
      preTokenBalances,
      postTokenBalances: tokenBalances(
        allKeys.map((a) => this.account(a)),
        mintOf,
      ),
    });
    for (const address of allKeys) {
      this.knownAddresses.add(address);
      let list = this.signaturesByAddress.get(address);
      if (!list) this.signaturesByAddress.set(address, (list = []));
      list.push(signature);
    }
    this.statusesMoved();
    return signature;
  }

  get landedCount(): number {
    return this.landed.size;
  }

  status(signature: string, searchTransactionHistory: boolean): StatusView | null {
    const tx = this.landed.get(signature);
    if (!tx) return null;
    const age = this.height - tx.height;
    if (!searchTransactionHistory && age > STATUS_CACHE_BLOCKS) return null;
    const confirmationStatus = this.commitmentOf(tx);
    return {
      slot: tx.slot,
      confirmations: confirmationStatus === 'finalized' ? null : age,
      err: tx.err,
      confirmationStatus,
    };
  }

  /** A landed transaction as seen at `commitment` (confirmed or finalized), or null. */
  transaction(signature: string, commitment: 'confirmed' | 'finalized'): LandedTransaction | null {
    const tx = this.landed.get(signature);
    if (!tx) return null;
    const reached = this.commitmentOf(tx);
    const ok = commitment === 'confirmed' ? reached !== 'processed' : reached === 'finalized';
    return ok ? tx : null;
  }

  private commitmentOf(tx: LandedTransaction): Commitment {
    if (this.stalled) return 'processed';
    const age = this.height - tx.height;
    if (age >= this.settings.finalizeAfterBlocks) return 'finalized';
    if (age >= this.settings.confirmAfterBlocks) return 'confirmed';
    return 'processed';
  }

  private record(tx: LandedTransaction): void {
    const oldest = this.landed.keys().next();
    if (this.landed.size >= HISTORY_LIMIT && oldest.done !== true) this.landed.delete(oldest.value);
    this.landed.set(tx.signature, tx);
  }

  /** The addresses a v0 transaction loads from its lookup tables, at the current state (empty for legacy). */
  private loadedAddresses(tx: WireTransaction): LoadedAddresses {
    const loaded: LoadedAddresses = { writable: [], readonly: [] };
    for (const lookup of tx.addressTableLookups) {
      const acc = this.account(lookup.accountKey);
      const table = acc ? readLookupTable(acc.owner, acc.data) : null;
      // A missing table or index makes the transaction fail in LiteSVM; the lists just stay short here.
      if (!table) continue;
      for (const i of lookup.writableIndexes) if (table.addresses[i]) loaded.writable.push(table.addresses[i]);
      for (const i of lookup.readonlyIndexes) if (table.addresses[i]) loaded.readonly.push(table.addresses[i]);
    }
    return loaded;
  }

  private balances(tx: WireTransaction): number[] {
    return tx.accountKeyBytes.map((key) => Number(this.svm.getBalance(key) ?? 0n));
  }

  private issueBlockhash(): void {
    this.latest = this.svm.latestBlockhash();
    this.blockhashes.set(this.latest, this.height);
    this.recordSlotHash();
  }

  /**
   * Keeps SlotHashes in step with the slots this chain reports, so a program that checks a recent slot (an
   * address lookup table created with `getSlot()`) finds it. LiteSVM's warpToSlot leaves the sysvar alone.
   */
  private recordSlotHash(): void {
    const slot = BigInt(this.slot);
    if (this.slotHashes[0]?.slot === slot) this.slotHashes[0] = { slot, hash: this.latest };
    else this.slotHashes.unshift({ slot, hash: this.latest });
    if (this.slotHashes.length > SLOT_HASHES_KEPT) this.slotHashes.length = SLOT_HASHES_KEPT;
    this.svm.setSlotHashes(this.slotHashes);
  }

  private pruneBlockhashes(): void {
    for (const [hash, issued] of this.blockhashes) {
      if (issued + BLOCKHASH_VALID_BLOCKS >= this.height || hash === this.latest) break;
      this.blockhashes.delete(hash);
    }
  }
}

function innerInstructionGroups(meta: TransactionMetadata): InnerInstructionGroup[] {
  const groups: InnerInstructionGroup[] = [];
  meta.innerInstructions().forEach((list, index) => {
    if (list.length === 0) return;
    groups.push({
      index,
      instructions: list.map((inner) => {
        const ix = inner.instruction();
        return {
          programIdIndex: ix.programIdIndex(),
          accounts: Array.from(ix.accounts()),
          data: ix.data(),
          stackHeight: inner.stackHeight(),
        };
      }),
    });
  });
  return groups;
}

function accountView(acc: LiteSvmAccount): AccountView {
  return {
    lamports: Number(acc.lamports()),
    owner: encodeBase58(acc.owner()),
    data: acc.data(),
    executable: acc.executable(),
  };
}

function addressBytes(address: string): Uint8Array {
  const bytes = decodeAddress(address);
  if (!bytes)
    throw new RpcFault(
      -32602,
      `Invalid param: ${JSON.stringify(address.slice(0, 64))} is not a base58 32-byte address`,
    );
  return bytes;
}

function parseOrFault(parse: () => WireTransaction): WireTransaction {
  try {
    return parse();
  } catch (e) {
    if (e instanceof WireError) throw new RpcFault(-32602, `invalid transaction: ${e.message}`);
    throw e;
  }
}
