/**
 * Address lookup tables: a v0 message names accounts by (table, index), so the policy checks can only run
 * once every table has been read from the chain and every index resolved. A table that is missing, not
 * owned by the lookup-table program, deactivated, or shorter than an index the message uses is refused:
 * the signer never judges a transaction whose accounts it cannot name.
 */
import { getAddressDecoder, type Address } from '@solana/addresses';
import { getU32Decoder, getU64Decoder, getU8Decoder } from '@solana/codecs-numbers';
import type { DecodedMessage } from './decode-transaction';

export const ADDRESS_LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';

/** The fixed metadata before a table's addresses (type, deactivation slot, last extension, authority). */
const LOOKUP_TABLE_META_BYTES = 56;
const LOOKUP_TABLE_TYPE = 1;
const NOT_DEACTIVATED = 0xffff_ffff_ffff_ffffn;

export interface LookupTable {
  address: string;
  deactivationSlot: bigint;
  lastExtendedSlot: bigint;
  lastExtendedSlotStartIndex: number;
  authority: string | null;
  addresses: string[];
}

/** What the chain holds at a table's address, as the RPC returned it. */
export interface RawAccount {
  owner: string;
  data: Uint8Array;
}

export type TableResult = { ok: true; table: LookupTable } | { ok: false; message: string };

const addressDecoder = getAddressDecoder();

/** Decodes one table account, or says why it is not a usable lookup table. */
export function decodeLookupTable(address: string, account: RawAccount | null): TableResult {
  if (account === null) return { ok: false, message: `lookup table ${address} does not exist` };
  if (account.owner !== ADDRESS_LOOKUP_TABLE_PROGRAM) {
    return { ok: false, message: `lookup table ${address} is owned by ${account.owner}, not the lookup-table program` };
  }
  const data = account.data;
  if (data.length < LOOKUP_TABLE_META_BYTES || (data.length - LOOKUP_TABLE_META_BYTES) % 32 !== 0) {
    return { ok: false, message: `lookup table ${address} has ${data.length} bytes of data, which is not a table` };
  }
  if (getU32Decoder().decode(data.subarray(0, 4)) !== LOOKUP_TABLE_TYPE) {
    return { ok: false, message: `lookup table ${address} is not initialised` };
  }
  const deactivationSlot = getU64Decoder().decode(data.subarray(4, 12));
  if (deactivationSlot !== NOT_DEACTIVATED) {
    return { ok: false, message: `lookup table ${address} was deactivated at slot ${deactivationSlot}` };
  }
  const hasAuthority = getU8Decoder().decode(data.subarray(21, 22)) === 1;
  const addresses: string[] = [];
  for (let at = LOOKUP_TABLE_META_BYTES; at < data.length; at += 32) {
    addresses.push(addressDecoder.decode(data.subarray(at, at + 32)));
  }
  return {
    ok: true,
    table: {
      address,
      deactivationSlot,
      lastExtendedSlot: getU64Decoder().decode(data.subarray(12, 20)),
      lastExtendedSlotStartIndex: getU8Decoder().decode(data.subarray(20, 21)),
      authority: hasAuthority ? addressDecoder.decode(data.subarray(22, 54)) : null,
      addresses,
    },
  };
}

/** Every account a message uses, in the order instructions index them, with its role. */
export interface ResolvedAccounts {
  keys: string[];
  writable: boolean[];
  signer: boolean[];
  /** For accounts loaded from a table: which table and index; null for the message's own accounts. */
  loadedFrom: ({ table: string; index: number } | null)[];
}

export type ResolveResult = { ok: true; accounts: ResolvedAccounts } | { ok: false; message: string };

/** The tables a message reads, in the order it names them (empty for a legacy message). */
export function lookupTableAddresses(message: DecodedMessage): Address[] {
  return message.version === 0 ? (message.addressTableLookups ?? []).map((l) => l.lookupTableAddress) : [];
}

/**
 * The full account list: the message's own accounts, then every writable account loaded from the tables (in
 * lookup order), then every read-only one. This is the runtime's order, so instruction indices point into it.
 */
export function resolveAccounts(message: DecodedMessage, tables: ReadonlyMap<string, LookupTable>): ResolveResult {
  const { header, staticAccounts } = message;
  const keys: string[] = [...staticAccounts];
  const signer = staticAccounts.map((_, i) => i < header.numSignerAccounts);
  const writable = staticAccounts.map((_, i) =>
    i < header.numSignerAccounts
      ? i < header.numSignerAccounts - header.numReadonlySignerAccounts
      : i < staticAccounts.length - header.numReadonlyNonSignerAccounts,
  );
  const loadedFrom: ResolvedAccounts['loadedFrom'] = staticAccounts.map(() => null);
  const lookups = message.version === 0 ? (message.addressTableLookups ?? []) : [];

  for (const pass of ['writable', 'readonly'] as const) {
    for (const lookup of lookups) {
      const table = tables.get(lookup.lookupTableAddress);
      if (!table) return { ok: false, message: `lookup table ${lookup.lookupTableAddress} was not read` };
      const indexes = pass === 'writable' ? lookup.writableIndexes : lookup.readonlyIndexes;
      for (const index of indexes) {
        const key = table.addresses[index];
        if (key === undefined) {
          return {
            ok: false,
            message: `lookup table ${table.address} has ${table.addresses.length} addresses; the message uses index ${index}`,
          };
        }
        keys.push(key);
        signer.push(false);
        writable.push(pass === 'writable');
        loadedFrom.push({ table: table.address, index });
      }
    }
  }
  return { ok: true, accounts: { keys, writable, signer, loadedFrom } };
}
