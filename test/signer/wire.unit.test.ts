import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  blockhash,
  compileTransaction,
  compressTransactionMessageUsingAddressLookupTables,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  getU64Encoder,
  partiallySignTransaction,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import { decodeTransactionBase64, decodeWireTransaction } from '../../src/signer/wire/decode-transaction';
import {
  ADDRESS_LOOKUP_TABLE_PROGRAM,
  decodeLookupTable,
  lookupTableAddresses,
  resolveAccounts,
  type LookupTable,
} from '../../src/signer/wire/lookup-tables';
import { serializeTransaction } from '../../src/signer/compile';
import { checkedMessage } from '../../src/signer/wire/checked-message';
import { firstInvalidSignature, signerSlots } from '../../src/signer/wire/signatures';
import { isSignerError } from '../../src/util/errors';

const SYSTEM = address('11111111111111111111111111111111');
const BLOCKHASH = blockhash('EETubP5AKHgjPAhzPAFcb8BAY1hMH639CWCFTqi3hq1k');
const TABLE = address('2VfGgnGfa3kxuZ5qFJdNJZrkRYiXFaVzs8WZSz6BGnhy');

function transfer(from: Address, to: Address, lamports: bigint, fromSigns = true): Instruction {
  const data = new Uint8Array(12);
  data.set([2, 0, 0, 0], 0);
  data.set(getU64Encoder().encode(lamports), 4);
  return {
    programAddress: SYSTEM,
    accounts: [
      { address: from, role: fromSigns ? AccountRole.WRITABLE_SIGNER : AccountRole.WRITABLE },
      { address: to, role: AccountRole.WRITABLE },
    ],
    data,
  };
}

function v0Message(feePayer: Address, ixs: Instruction[]) {
  return pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
}

function legacyMessage(feePayer: Address, ixs: Instruction[]) {
  return pipe(
    createTransactionMessage({ version: 'legacy' }),
    (m) => setTransactionMessageFeePayer(feePayer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: BLOCKHASH, lastValidBlockHeight: 100n }, m),
    (m) => appendTransactionMessageInstructions(ixs, m),
  );
}

/** A lookup table account's data as the lookup-table program lays it out: 56 bytes of metadata, then addresses. */
function tableData(addresses: Address[], deactivationSlot = 0xffff_ffff_ffff_ffffn): Uint8Array {
  const data = new Uint8Array(56 + 32 * addresses.length);
  data.set([1, 0, 0, 0], 0);
  data.set(getU64Encoder().encode(deactivationSlot), 4);
  data.set(getU64Encoder().encode(5n), 12);
  for (const [i, a] of addresses.entries()) data.set(getAddressEncoder().encode(a), 56 + 32 * i);
  return data;
}

function expectInvalid(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(isSignerError(e) && e.code).toBe('payload_invalid');
    expect((e as Error).message).toMatch(pattern);
    return;
  }
  throw new Error('expected payload_invalid');
}

/** The checked view of a transaction with no lookup tables: what serializeTransaction writes signatures around. */
function messageOf(tx: ReturnType<typeof decodeWireTransaction>) {
  const resolved = resolveAccounts(tx.message, new Map());
  if (!resolved.ok) throw new Error(resolved.message);
  return checkedMessage(tx, resolved.accounts);
}

function expectRefused(result: { ok: true } | { ok: false; message: string }, pattern: RegExp): void {
  if (result.ok) throw new Error('expected a refusal');
  expect(result.message).toMatch(pattern);
}

let payer: KeyPairSigner;
let other: KeyPairSigner;
let dest: Address;
let hidden: Address;

beforeAll(async () => {
  payer = await generateKeyPairSigner();
  other = await generateKeyPairSigner();
  dest = (await generateKeyPairSigner()).address;
  hidden = (await generateKeyPairSigner()).address;
});

describe('wire transactions built by @solana/kit', () => {
  it('decodes an unsigned legacy transfer: one empty slot, the fee payer first', () => {
    const wire = getBase64EncodedWireTransaction(
      compileTransaction(legacyMessage(payer.address, [transfer(payer.address, dest, 5n)])),
    );
    const tx = decodeWireTransaction(decodeTransactionBase64(wire));
    expect(tx.version).toBe('legacy');
    expect(tx.signatures).toEqual([null]);
    expect(signerSlots(tx)).toEqual([payer.address]);
    expect(lookupTableAddresses(tx.message)).toEqual([]);
  });

  it('resolves a v0 account loaded from a lookup table, with its writable role, after the static accounts', () => {
    const compressed = compressTransactionMessageUsingAddressLookupTables(
      v0Message(payer.address, [transfer(payer.address, hidden, 7n)]),
      { [TABLE]: [dest, hidden] },
    );
    const tx = decodeWireTransaction(
      decodeTransactionBase64(getBase64EncodedWireTransaction(compileTransaction(compressed))),
    );
    expect(tx.version).toBe(0);
    expect(lookupTableAddresses(tx.message)).toEqual([TABLE]);
    expect(tx.message.staticAccounts).not.toContain(hidden);

    const decoded = decodeLookupTable(TABLE, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: tableData([dest, hidden]) });
    if (!decoded.ok) throw new Error(decoded.message);
    const resolved = resolveAccounts(tx.message, new Map([[TABLE, decoded.table]]));
    if (!resolved.ok) throw new Error(resolved.message);
    const at = resolved.accounts.keys.indexOf(hidden);
    expect(at).toBeGreaterThanOrEqual(tx.message.staticAccounts.length);
    expect(resolved.accounts.writable[at]).toBe(true);
    expect(resolved.accounts.loadedFrom[at]).toEqual({ table: TABLE, index: 1 });
    expect(resolved.accounts.keys[0]).toBe(payer.address);
    expect(resolved.accounts.writable[0]).toBe(true);
  });

  it('refuses a table that is missing, foreign-owned, deactivated or too short for an index', () => {
    expectRefused(decodeLookupTable(TABLE, null), /does not exist/);
    expectRefused(decodeLookupTable(TABLE, { owner: SYSTEM, data: tableData([dest]) }), /owned by 1111/);
    expectRefused(
      decodeLookupTable(TABLE, { owner: ADDRESS_LOOKUP_TABLE_PROGRAM, data: tableData([dest], 42n) }),
      /deactivated at slot 42/,
    );

    const compressed = compressTransactionMessageUsingAddressLookupTables(
      v0Message(payer.address, [transfer(payer.address, hidden, 7n)]),
      { [TABLE]: [dest, hidden] },
    );
    const tx = decodeWireTransaction(
      decodeTransactionBase64(getBase64EncodedWireTransaction(compileTransaction(compressed))),
    );
    const short: LookupTable = {
      address: TABLE,
      deactivationSlot: 0xffff_ffff_ffff_ffffn,
      lastExtendedSlot: 0n,
      lastExtendedSlotStartIndex: 0,
      authority: null,
      addresses: [dest],
    };
    expectRefused(resolveAccounts(tx.message, new Map([[TABLE, short]])), /has 1 addresses; the message uses index 1/);
    expectRefused(resolveAccounts(tx.message, new Map()), /not read/);
  });

  it("keeps another signer's valid signature, fills only our slot, and the result verifies in kit", async () => {
    // `other` pays the fee and signs first; `payer` moves its own lamports and signs through us.
    const compiled = compileTransaction(v0Message(other.address, [transfer(payer.address, dest, 9n)]));
    const partly = await partiallySignTransaction([other.keyPair], compiled);
    const tx = decodeWireTransaction(decodeTransactionBase64(getBase64EncodedWireTransaction(partly)));
    expect(signerSlots(tx)).toEqual([other.address, payer.address]);
    expect(tx.signatures[0]).not.toBeNull();
    expect(tx.signatures[1]).toBeNull();
    expect(firstInvalidSignature(tx)).toBeNull();

    const ours = await partiallySignTransaction([payer.keyPair], compiled);
    const wire = serializeTransaction(
      messageOf(tx),
      new Map([
        [other.address, tx.signatures[0]!],
        [payer.address, new Uint8Array(ours.signatures[payer.address]!)],
      ]),
    );
    const back = getTransactionDecoder().decode(wire);
    expect(back.signatures[other.address]).toEqual(partly.signatures[other.address]);
    expect(back.signatures[payer.address]).toEqual(ours.signatures[payer.address]);
  });

  it('leaves a slot meant for someone else empty', async () => {
    const compiled = compileTransaction(v0Message(other.address, [transfer(payer.address, dest, 9n)]));
    const tx = decodeWireTransaction(decodeTransactionBase64(getBase64EncodedWireTransaction(compiled)));
    const ours = await partiallySignTransaction([payer.keyPair], compiled);
    const back = getTransactionDecoder().decode(
      serializeTransaction(messageOf(tx), new Map([[payer.address, new Uint8Array(ours.signatures[payer.address]!)]])),
    );
    expect(back.signatures[other.address]).toBeNull();
  });

  it('names the slot of a tampered signature', async () => {
    const compiled = compileTransaction(v0Message(other.address, [transfer(payer.address, dest, 9n)]));
    const partly = await partiallySignTransaction([other.keyPair], compiled);
    const bytes = decodeTransactionBase64(getBase64EncodedWireTransaction(partly));
    bytes[10] = (bytes[10] ?? 0) ^ 0xff;
    expect(firstInvalidSignature(decodeWireTransaction(bytes))).toEqual({ slot: 0, signer: other.address });
  });
});

describe('malformed wire transactions are payload_invalid with the place named', () => {
  const good = () =>
    decodeTransactionBase64(
      getBase64EncodedWireTransaction(
        compileTransaction(legacyMessage(payer.address, [transfer(payer.address, dest, 5n)])),
      ),
    );

  it('refuses text that is not canonical base64', () => {
    expectInvalid(() => decodeTransactionBase64('AQID*A=='), /character 4 \("\*"\)/);
    expectInvalid(() => decodeTransactionBase64('AQI'), /canonical base64/);
    expectInvalid(() => decodeTransactionBase64('AQJ='), /padding bits/);
    expectInvalid(() => decodeTransactionBase64(''), /empty/);
  });

  it('refuses more than 1232 bytes before decoding them', () => {
    expectInvalid(() => decodeTransactionBase64('A'.repeat(2000)), /1232-byte/);
    expectInvalid(() => decodeWireTransaction(new Uint8Array(1233)), /1233 bytes/);
  });

  it('refuses bytes after the message', () => {
    const bytes = good();
    const longer = new Uint8Array(bytes.length + 3);
    longer.set(bytes);
    expectInvalid(() => decodeWireTransaction(longer), new RegExp(`byte ${bytes.length}: 3 bytes follow`));
  });

  it('refuses a signature count that disagrees with the header', () => {
    const bytes = good();
    // Two slots declared, one signer in the header: shift the message by 64 bytes of zeroes.
    const forged = new Uint8Array(bytes.length + 64);
    forged[0] = 2;
    forged.set(bytes.subarray(1), 1 + 64);
    expectInvalid(() => decodeWireTransaction(forged), /header says 1 signers but the transaction has 2/);
  });

  it('refuses a truncated message and says where it starts', () => {
    const bytes = good();
    expectInvalid(() => decodeWireTransaction(bytes.subarray(0, 80)), /message \(from byte 65\) does not decode/);
  });

  it('refuses an instruction index past the accounts', () => {
    const bytes = good();
    bytes[bytes.length - 14] = 99; // the destination's index: just before the 1-byte data length and 12 data bytes
    expectInvalid(() => decodeWireTransaction(bytes), /account 1 has index 99/);
  });
});
