/**
 * The `jsonParsed` account forms a node gives for the accounts agent code reads that way: address lookup tables
 * (kit's fetchAddressesForLookupTables asks for nothing else) and SPL Token / Token-2022 accounts and mints.
 * Token layouts are read with the SPL Token program client (as the signer's policy reads them), lookup tables with
 * kit's codecs; an account of another program, or one these layouts do not fit, has no
 * parsed form and the caller answers base64 as a node does.
 */
import {
  fixDecoderSize,
  getAddressDecoder,
  getArrayDecoder,
  getBytesDecoder,
  getOptionDecoder,
  getStructDecoder,
  getU32Decoder,
  getU64Decoder,
  getU8Decoder,
  type Address,
  type Option,
} from '@solana/kit';
import { SPL_TOKEN_PROGRAM, TOKEN_2022_PROGRAM } from '../solana/programs';
import { decodeMint, decodeTokenAccount } from '../solana/token-state';

export const LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';
export const TOKEN_PROGRAM = SPL_TOKEN_PROGRAM;
export { TOKEN_2022_PROGRAM };
const NATIVE_MINT = 'So11111111111111111111111111111111111111112';

const LOOKUP_TABLE_META_BYTES = 56;
const LOOKUP_TABLE_DISCRIMINATOR = 1;

export interface ParsedData {
  program: string;
  parsed: { type: string; info: Record<string, unknown> };
  space: number;
}

export interface TokenAmount {
  amount: string;
  decimals: number;
  uiAmount: number | null;
  uiAmountString: string;
}

export interface TokenAccountInfo {
  mint: string;
  owner: string;
  amount: bigint;
  delegate: string | null;
  state: 'uninitialized' | 'initialized' | 'frozen';
  isNative: bigint | null;
  delegatedAmount: bigint;
  closeAuthority: string | null;
}

export interface MintInfo {
  mintAuthority: string | null;
  supply: bigint;
  decimals: number;
  isInitialized: boolean;
  freezeAuthority: string | null;
}

const lookupTableMetaDecoder = getStructDecoder([
  ['discriminator', getU32Decoder()],
  ['deactivationSlot', getU64Decoder()],
  ['lastExtendedSlot', getU64Decoder()],
  ['lastExtendedSlotStartIndex', getU8Decoder()],
  ['authority', getOptionDecoder(getAddressDecoder(), { prefix: getU8Decoder() })],
  ['padding', fixDecoderSize(getBytesDecoder(), 2)],
]);
const addressListDecoder = getArrayDecoder(getAddressDecoder(), { size: 'remainder' });

const some = <T>(o: Option<T>): T | null => (o.__option === 'Some' ? o.value : null);
const STATES = ['uninitialized', 'initialized', 'frozen'] as const;

export function isTokenProgram(owner: string): boolean {
  return owner === TOKEN_PROGRAM || owner === TOKEN_2022_PROGRAM;
}

/** A token account's fields, or null when the account is no initialized SPL Token / Token-2022 account. */
export function readTokenAccount(owner: string, data: Uint8Array): TokenAccountInfo | null {
  const a = decodeTokenAccount(owner, data);
  const state = a === null ? undefined : STATES[a.state];
  if (a === null || state === undefined || state === 'uninitialized') return null;
  return {
    mint: a.mint,
    owner: a.owner,
    amount: a.amount,
    delegate: some(a.delegate),
    state,
    isNative: some(a.isNative),
    delegatedAmount: a.delegatedAmount,
    closeAuthority: some(a.closeAuthority),
  };
}

export function readMint(owner: string, data: Uint8Array): MintInfo | null {
  const m = decodeMint(owner, data);
  if (m === null || !m.isInitialized) return null;
  return {
    mintAuthority: some(m.mintAuthority),
    supply: m.supply,
    decimals: m.decimals,
    isInitialized: m.isInitialized,
    freezeAuthority: some(m.freezeAuthority),
  };
}

export interface LookupTableInfo {
  deactivationSlot: bigint;
  lastExtendedSlot: bigint;
  lastExtendedSlotStartIndex: number;
  authority: string | null;
  addresses: Address[];
}

export function readLookupTable(owner: string, data: Uint8Array): LookupTableInfo | null {
  if (owner !== LOOKUP_TABLE_PROGRAM || data.length < LOOKUP_TABLE_META_BYTES) return null;
  if ((data.length - LOOKUP_TABLE_META_BYTES) % 32 !== 0) return null;
  const meta = lookupTableMetaDecoder.decode(data.subarray(0, LOOKUP_TABLE_META_BYTES));
  if (meta.discriminator !== LOOKUP_TABLE_DISCRIMINATOR) return null;
  return {
    deactivationSlot: meta.deactivationSlot,
    lastExtendedSlot: meta.lastExtendedSlot,
    lastExtendedSlotStartIndex: meta.lastExtendedSlotStartIndex,
    authority: some(meta.authority),
    addresses: [...addressListDecoder.decode(data.subarray(LOOKUP_TABLE_META_BYTES))],
  };
}

/** A token amount as a node words it: the base units as a string, and the same scaled by the mint's decimals. */
export function tokenAmount(amount: bigint, decimals: number): TokenAmount {
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const uiAmountString = fraction ? `${whole}.${fraction}` : whole;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

export type MintLookup = (mint: string) => MintInfo | null;

/** The parsed form of an account a node would parse, or null (the caller then answers base64). */
export function parsedAccountData(owner: string, data: Uint8Array, mintOf: MintLookup): ParsedData | null {
  const program = owner === TOKEN_PROGRAM ? 'spl-token' : owner === TOKEN_2022_PROGRAM ? 'spl-token-2022' : null;
  if (program) {
    const account = readTokenAccount(owner, data);
    if (account) {
      const decimals = account.mint === NATIVE_MINT ? 9 : mintOf(account.mint)?.decimals;
      // A node cannot parse a token account without its mint's decimals either; it answers base64.
      if (decimals === undefined) return null;
      const info: Record<string, unknown> = {
        isNative: account.isNative !== null,
        mint: account.mint,
        owner: account.owner,
        state: account.state,
        tokenAmount: tokenAmount(account.amount, decimals),
      };
      if (account.delegate !== null) {
        info.delegate = account.delegate;
        info.delegatedAmount = tokenAmount(account.delegatedAmount, decimals);
      }
      if (account.closeAuthority !== null) info.closeAuthority = account.closeAuthority;
      if (account.isNative !== null) info.rentExemptReserve = tokenAmount(account.isNative, decimals);
      return { program, parsed: { type: 'account', info }, space: data.length };
    }
    const mint = readMint(owner, data);
    if (mint) {
      const info = {
        decimals: mint.decimals,
        freezeAuthority: mint.freezeAuthority,
        isInitialized: mint.isInitialized,
        mintAuthority: mint.mintAuthority,
        supply: mint.supply.toString(),
      };
      return { program, parsed: { type: 'mint', info }, space: data.length };
    }
    return null;
  }
  const table = readLookupTable(owner, data);
  if (!table) return null;
  const info: Record<string, unknown> = {
    addresses: table.addresses,
    deactivationSlot: table.deactivationSlot.toString(),
    lastExtendedSlot: table.lastExtendedSlot.toString(),
    lastExtendedSlotStartIndex: table.lastExtendedSlotStartIndex,
  };
  if (table.authority !== null) info.authority = table.authority;
  return { program: 'address-lookup-table', parsed: { type: 'lookupTable', info }, space: data.length };
}
