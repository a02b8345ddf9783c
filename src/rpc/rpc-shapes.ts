/**
 * Hand-written guards for the Solana JSON-RPC results the signer reads. Each reader takes the raw `result`
 * and returns typed data or throws ShapeProblem naming the path that is wrong; the client turns that into an
 * RpcError of kind `shape`. Lamports and heights must be safe integers: JSON.parse rounds anything larger,
 * and a rounded amount must never reach a spend check.
 */
import { STRICT_BASE64 } from '../util/base64';
import { decodeAddress, decodeBase58 } from '../util/base58';
import type {
  AddressSignature,
  AccountData,
  AccountSummary,
  AccountsAtSlot,
  SignatureStatus,
  SimulationResult,
  TokenBalance,
  TransactionMeta,
} from './types';

export class ShapeProblem extends Error {}

type Obj = Record<string, unknown>;

function object(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ShapeProblem(`${path} is not an object`);
  return v as Obj;
}

function array(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) throw new ShapeProblem(`${path} is not an array`);
  return v;
}

export function wholeNumber(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new ShapeProblem(`${path} is not a whole number`);
  if (!Number.isSafeInteger(v)) throw new ShapeProblem(`${path} is beyond the exact integer range`);
  return v;
}

function stringList(v: unknown, path: string): string[] {
  if (v === null || v === undefined) return [];
  const list = array(v, path);
  const strings = list.filter((s) => typeof s === 'string');
  if (strings.length !== list.length) throw new ShapeProblem(`${path} holds a non-string`);
  return strings;
}

function hash32(v: unknown, path: string): string {
  if (typeof v !== 'string' || !decodeAddress(v)) throw new ShapeProblem(`${path} is not a base58 32-byte value`);
  return v;
}

/** `{context, value}` → context.slot. */
function contextSlot(result: unknown): number {
  const context = object(object(result, 'result')['context'], 'result.context');
  return wholeNumber(context['slot'], 'result.context.slot');
}

/** `{context, value}` → value. */
function contextValue(result: unknown): unknown {
  const r = object(result, 'result');
  if (!('value' in r)) throw new ShapeProblem('result.value is missing');
  return r['value'];
}

function present(o: Obj, key: string, path: string): unknown {
  if (!(key in o)) throw new ShapeProblem(`${path}.${key} is missing`);
  return o[key];
}

function account(v: unknown, path: string): AccountSummary | null {
  if (v === null) return null;
  const o = object(v, path);
  return { lamports: wholeNumber(o['lamports'], `${path}.lamports`), owner: hash32(o['owner'], `${path}.owner`) };
}

function accountList(v: unknown, count: number, path: string): (AccountSummary | null)[] {
  const list = array(v, path);
  if (list.length !== count) throw new ShapeProblem(`${path} has ${list.length} entries for ${count} addresses`);
  return list.map((a, i) => account(a, `${path}[${i}]`));
}

export const readGenesisHash = (r: unknown): string => hash32(r, 'result');

export function readLatestBlockhash(r: unknown): { blockhash: string; lastValidBlockHeight: number } {
  const v = object(contextValue(r), 'result.value');
  return {
    blockhash: hash32(v['blockhash'], 'result.value.blockhash'),
    lastValidBlockHeight: wholeNumber(v['lastValidBlockHeight'], 'result.value.lastValidBlockHeight'),
  };
}

export const readBalance = (r: unknown): number => wholeNumber(contextValue(r), 'result.value');

export function readFee(r: unknown): number | null {
  const v = contextValue(r);
  return v === null ? null : wholeNumber(v, 'result.value');
}

export function readSimulation(r: unknown, requested: number): SimulationResult {
  const v = object(contextValue(r), 'result.value');
  const units = v['unitsConsumed'];
  const accounts = v['accounts'];
  return {
    err: present(v, 'err', 'result.value'),
    logs: stringList(v['logs'], 'result.value.logs'),
    unitsConsumed: units === undefined || units === null ? null : wholeNumber(units, 'result.value.unitsConsumed'),
    slot: contextSlot(r),
    // A node leaves accounts out (null) when the simulation did not run; [] then says "not reported".
    accounts:
      accounts === undefined || accounts === null ? [] : accountsWithData(accounts, requested, 'result.value.accounts'),
    preBalances: optionalBalances(v['preBalances'], 'result.value.preBalances'),
    preTokenBalances:
      v['preTokenBalances'] === undefined || v['preTokenBalances'] === null
        ? null
        : tokenBalances(v['preTokenBalances'], 'result.value.preTokenBalances'),
  };
}

function optionalBalances(v: unknown, path: string): number[] | null {
  if (v === undefined || v === null) return null;
  return array(v, path).map((b, i) => wholeNumber(b, `${path}[${i}]`));
}

/** preTokenBalances/postTokenBalances: each entry's account index, mint, owner and exact amount in base units. */
function tokenBalances(v: unknown, path: string): TokenBalance[] {
  return array(v, path).map((e, i) => {
    const at = `${path}[${i}]`;
    const o = object(e, at);
    const ui = object(o['uiTokenAmount'], `${at}.uiTokenAmount`);
    const amount = ui['amount'];
    if (typeof amount !== 'string' || !/^\d{1,20}$/.test(amount))
      throw new ShapeProblem(`${at}.uiTokenAmount.amount is not a whole number`);
    const owner = o['owner'];
    return {
      accountIndex: wholeNumber(o['accountIndex'], `${at}.accountIndex`),
      mint: hash32(o['mint'], `${at}.mint`),
      owner: owner === undefined || owner === null ? null : hash32(owner, `${at}.owner`),
      amount: BigInt(amount),
    };
  });
}

export const readSignature = (r: unknown): string => signature64(r, 'result');

const CONFIRMATION_STATUSES = new Set(['processed', 'confirmed', 'finalized']);

/** An entry's `confirmationStatus`: a commitment level, or null where the node leaves it out. */
function confirmationStatus(o: Record<string, unknown>, path: string): SignatureStatus['confirmationStatus'] {
  const status = o['confirmationStatus'];
  if (status !== undefined && status !== null && !(typeof status === 'string' && CONFIRMATION_STATUSES.has(status))) {
    throw new ShapeProblem(`${path}.confirmationStatus is not a commitment level`);
  }
  return (status ?? null) as SignatureStatus['confirmationStatus'];
}

export function readStatuses(r: unknown, count: number): (SignatureStatus | null)[] {
  const list = array(contextValue(r), 'result.value');
  if (list.length !== count) throw new ShapeProblem(`result.value has ${list.length} entries for ${count} signatures`);
  return list.map((s, i) => {
    const path = `result.value[${i}]`;
    if (s === null) return null;
    const o = object(s, path);
    const status = confirmationStatus(o, path);
    return {
      slot: wholeNumber(o['slot'], `${path}.slot`),
      confirmationStatus: status,
      err: present(o, 'err', path),
    };
  });
}

export const readBlockHeight = (r: unknown): number => wholeNumber(r, 'result');

export function readTransactionMeta(r: unknown): TransactionMeta | null {
  if (r === null) return null;
  const o = object(r, 'result');
  const slot = wholeNumber(o['slot'], 'result.slot');
  const { signatures, accountKeys } = transactionKeys(o['transaction']);
  const metaRaw = o['meta'];
  if (metaRaw === null || metaRaw === undefined) {
    const none = { err: null, fee: null, preBalance0: null, postBalance0: null, logs: [] };
    const balances = { preBalances: [], postBalances: [], preTokenBalances: [], postTokenBalances: [] };
    return { slot, ...none, signatures, accountKeys, ...balances, loadedAddresses: [] };
  }
  const meta = object(metaRaw, 'result.meta');
  const pre = array(meta['preBalances'], 'result.meta.preBalances').map((b, i) =>
    wholeNumber(b, `result.meta.preBalances[${i}]`),
  );
  const post = array(meta['postBalances'], 'result.meta.postBalances').map((b, i) =>
    wholeNumber(b, `result.meta.postBalances[${i}]`),
  );
  return {
    slot,
    err: present(meta, 'err', 'result.meta'),
    fee: wholeNumber(meta['fee'], 'result.meta.fee'),
    preBalance0: pre[0] ?? null,
    postBalance0: post[0] ?? null,
    logs: stringList(meta['logMessages'], 'result.meta.logMessages'),
    signatures,
    accountKeys,
    preBalances: pre,
    postBalances: post,
    preTokenBalances: listOrNone(meta['preTokenBalances'], (v) => tokenBalances(v, 'result.meta.preTokenBalances')),
    postTokenBalances: listOrNone(meta['postTokenBalances'], (v) => tokenBalances(v, 'result.meta.postTokenBalances')),
    loadedAddresses: loaded(meta['loadedAddresses']),
  };
}

const listOrNone = <T>(v: unknown, read: (v: unknown) => T[]): T[] => (v === undefined || v === null ? [] : read(v));

/** meta.loadedAddresses: writable then read-only, as they follow the static keys in the full account list. */
function loaded(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const o = object(v, 'result.meta.loadedAddresses');
  const list = (k: string): string[] =>
    listOrNone(o[k], (x) =>
      array(x, `result.meta.loadedAddresses.${k}`).map((a, i) => hash32(a, `result.meta.loadedAddresses.${k}[${i}]`)),
    );
  return [...list('writable'), ...list('readonly')];
}

/** The `json` encoding's signatures and static account keys; an absent transaction (a trimmed answer) gives none. */
function transactionKeys(v: unknown): { signatures: string[]; accountKeys: string[] } {
  if (v === undefined || v === null) return { signatures: [], accountKeys: [] };
  const tx = object(v, 'result.transaction');
  const signatures = array(tx['signatures'], 'result.transaction.signatures').map((s, i) =>
    signature64(s, `result.transaction.signatures[${i}]`),
  );
  const message = object(tx['message'], 'result.transaction.message');
  const accountKeys = array(message['accountKeys'], 'result.transaction.message.accountKeys').map((k, i) =>
    hash32(k, `result.transaction.message.accountKeys[${i}]`),
  );
  return { signatures, accountKeys };
}

function signature64(v: unknown, path: string): string {
  const bytes = typeof v === 'string' ? decodeBase58(v) : null;
  if (!bytes || bytes.length !== 64) throw new ShapeProblem(`${path} is not a base58 64-byte signature`);
  return v as string;
}

/** getSignaturesForAddress: a plain list (no context), at most `limit` entries. */
export function readAddressSignatures(r: unknown, limit: number): AddressSignature[] {
  const list = array(r, 'result');
  if (list.length > limit) throw new ShapeProblem(`result has ${list.length} entries for a limit of ${limit}`);
  return list.map((e, i) => {
    const path = `result[${i}]`;
    const o = object(e, path);
    const status = confirmationStatus(o, path);
    return {
      signature: signature64(o['signature'], `${path}.signature`),
      slot: wholeNumber(o['slot'], `${path}.slot`),
      err: present(o, 'err', path),
      confirmationStatus: status,
    };
  });
}

export const readAccounts = (r: unknown, count: number): (AccountSummary | null)[] =>
  accountList(contextValue(r), count, 'result.value');

export const readAccount = (r: unknown): AccountSummary | null => account(contextValue(r), 'result.value');

function accountWithData(v: unknown, path: string): AccountData | null {
  const summary = account(v, path);
  if (summary === null) return null;
  const data = object(v, path)['data'];
  // base64 encoding answers [text, "base64"].
  if (!Array.isArray(data) || data[1] !== 'base64' || typeof data[0] !== 'string' || !STRICT_BASE64.test(data[0]))
    throw new ShapeProblem(`${path}.data is not [base64 text, "base64"]`);
  return { ...summary, data: new Uint8Array(Buffer.from(data[0], 'base64')) };
}

function accountsWithData(v: unknown, count: number, path: string): (AccountData | null)[] {
  const list = array(v, path);
  if (list.length !== count) throw new ShapeProblem(`${path} has ${list.length} entries for ${count} addresses`);
  return list.map((a, i) => accountWithData(a, `${path}[${i}]`));
}

export function readAccountsData(r: unknown, count: number): AccountsAtSlot {
  const o = object(r, 'result');
  const context = object(o['context'], 'result.context');
  const slot = wholeNumber(context['slot'], 'result.context.slot');
  return { slot, accounts: accountsWithData(contextValue(r), count, 'result.value') };
}

export function readBlockhashValid(r: unknown): boolean {
  const v = contextValue(r);
  if (typeof v !== 'boolean') throw new ShapeProblem('result.value is not a boolean');
  return v;
}
