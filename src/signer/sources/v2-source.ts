/**
 * Payload v2: the agent compiled the transaction itself (legacy or v0). Preparing it means judging what the
 * bytes can do before any policy check reads them: other signers' signatures must verify and every other
 * signer slot must be filled (except a foreign fee payer's: it signs and sends after the key), a durable nonce
 * is refused, the blockhash must still be valid (or is replaced on request: the simulation's batch reads its
 * validity, see flow/simulate.ts), and every lookup table is resolved (kept ones from lookup-table-cache.ts) so
 * the checks see the full account list. docs/payloads.md describes each refusal and what to do about it.
 *
 * These refusals stay here, outside the policy core (policy/decide.ts), on purpose: they say whether the payload
 * is a transaction the signer can prepare at all (a signature that does not verify, a slot left empty, a lifetime
 * with no end, a lookup table that does not resolve), whatever the key's policy is. No setting of a key changes
 * them; they are the source's input errors, coded as refusals so the agent gets the same report as for a policy one.
 */
import { getU32Decoder } from '@solana/codecs-numbers';
import type { Blockhash } from '@solana/rpc-types';
import { getCompiledTransactionMessageEncoder } from '@solana/transaction-messages';
import type { RpcClient } from '../../rpc/types';
import type { KeySigner } from '../../keys/key-signer';
import { serializeTransaction, signatureToBase58 } from '../compile';
import { refusal, type Refusal } from '../refusals';
import type { PayloadV2 } from '../payload';
import { SYSTEM_PROGRAM } from '../../solana/programs';
import { checkedMessage } from '../wire/checked-message';
import { decodeWireTransaction, type DecodedTransaction } from '../wire/decode-transaction';
import { resolveAccounts, type LookupTable, type ResolvedAccounts } from '../wire/lookup-tables';
import { firstInvalidSignature, signerSlots } from '../wire/signatures';
import { lookupTableCacheOf } from './lookup-table-cache';
import type { Lifetime, Prepared, TransactionSource } from './transaction';

/** System instruction 4: the first instruction of a transaction whose lifetime is a durable nonce. */
const ADVANCE_NONCE_ACCOUNT_TAG = 4;

const refused = (refusal: Refusal): Prepared => ({ ok: false, refusal });

/** `key`: the pubkey of the key that signs (the fee payer, or another required signer in sign_only). */
export function v2Source(payload: PayloadV2, chain: RpcClient, key: string): TransactionSource {
  const tx = payload.transaction;
  const programs: string[] = [];
  for (const ix of tx.message.instructions) {
    const program = tx.message.staticAccounts[ix.programAddressIndex];
    if (program !== undefined && programs[programs.length - 1] !== program) programs.push(program);
  }
  // The first preparation may use kept lookup tables; a later one (after an approval's wait, or on a new
  // blockhash) reads them afresh, so what is sent resolves as the chain has it then.
  let prepared = 0;
  return {
    feePayer: payload.feePayer,
    programs,
    foreignFeePayerAllowed: true,
    refreshable: payload.replaceBlockhash,
    prepare: (lifetime) => prepareV2(chain, payload, key, lifetime, prepared++ === 0),
    unsigned: (prepared) => ({
      prepared,
      wireBase64: Buffer.from(serializeTransaction(prepared.msg, new Map(prepared.presentSignatures))).toString(
        'base64',
      ),
      signature: null,
      complete: false,
    }),
    async signed(prepared, signer: KeySigner) {
      const own = await signer.sign(prepared.msg.bytes);
      const signatures = new Map(prepared.presentSignatures);
      signatures.set(signer.pubkey, own);
      return {
        prepared,
        wireBase64: Buffer.from(serializeTransaction(prepared.msg, signatures)).toString('base64'),
        signature: signatureToBase58(own),
        // Only a foreign fee payer's slot can still be empty (prepareV2 refuses any other).
        complete: signatures.size === prepared.msg.numRequiredSignatures,
      };
    },
  };
}

async function prepareV2(
  chain: RpcClient,
  payload: PayloadV2,
  key: string,
  latest: Lifetime,
  keptTables: boolean,
): Promise<Prepared> {
  const original = payload.transaction;
  const nonce = durableNonceRefusal(original);
  if (nonce) return refused(nonce);

  const invalid = firstInvalidSignature(original);
  if (invalid) {
    return refused(
      refusal(
        'invalid_signature',
        `the signature in slot ${invalid.slot} (${invalid.signer}) does not verify against the message: a tampered or misplaced signature is never passed on`,
        { signature_slot: invalid.slot, account: invalid.signer },
      ),
    );
  }
  const slots = signerSlots(original);
  if (!slots.includes(key)) {
    return refused(
      refusal(
        'key_not_a_signer',
        `key ${key} is neither the fee payer (${payload.feePayer}) nor a signer of this transaction`,
        { fee_payer: payload.feePayer },
      ),
    );
  }
  const foreignFeePayer = payload.feePayer === key ? null : payload.feePayer;
  const present = new Map<string, Uint8Array>();
  for (const [slot, signer] of slots.entries()) {
    if (signer === key) continue; // the key's own slot: filled when it signs
    const sig = original.signatures[slot];
    // A foreign fee payer signs after the key (and sends): its slot may stay empty.
    if (!sig && signer === foreignFeePayer) continue;
    if (!sig) {
      return refused(
        refusal(
          'signature_slot_empty',
          `signature slot ${slot} (${signer}) is empty: the signer fills only its key's slot, so ${signer} must sign before the transaction is handed over`,
          { signature_slot: slot, account: signer },
        ),
      );
    }
    present.set(signer, sig);
  }

  let tx = original;
  let lifetime: Lifetime;
  let payloadBlockhash: string | null = null;
  if (payload.replaceBlockhash) {
    const other = [...present.keys()][0];
    if (other !== undefined) {
      return refused(
        refusal(
          'replace_blockhash_voids_signature',
          `replace_blockhash would void the signature of ${other}: leave it false and sign on a valid blockhash`,
          { account: other },
        ),
      );
    }
    tx = onBlockhash(original, latest.blockhash);
    lifetime = latest;
  } else {
    const blockhash = original.message.lifetimeToken;
    // Whether it is still valid is read in the simulation's batch, not here: a round trip less.
    payloadBlockhash = blockhash;
    // A first bound only: the held blockhash may be older than the agent's, so the simulation's batch reads the
    // latest one and the flow waits to its height (`Figures.validUntil`).
    lifetime = { blockhash, lastValidBlockHeight: latest.lastValidBlockHeight };
  }

  const accounts = await resolveTables(chain, tx, keptTables);
  if (!accounts.ok) return refused(refusal('lookup_table_invalid', accounts.message));
  return {
    ok: true,
    passed: ['lookup_tables'],
    prepared: {
      msg: checkedMessage(tx, accounts.accounts),
      lifetime,
      partialSigners: [...present.keys()],
      mustBeNew: [],
      presentSignatures: present,
      foreignFeePayer,
      payloadBlockhash,
    },
  };
}

function durableNonceRefusal(tx: DecodedTransaction): Refusal | null {
  const first = tx.message.instructions[0];
  if (first === undefined) return null;
  const program = tx.message.staticAccounts[first.programAddressIndex];
  const data = first.data;
  if (program !== SYSTEM_PROGRAM || data === undefined || data.length < 4) return null;
  if (getU32Decoder().decode(data.subarray(0, 4)) !== ADVANCE_NONCE_ACCOUNT_TAG) return null;
  return refusal(
    'durable_nonce',
    'durable-nonce transactions (first instruction AdvanceNonceAccount) are not signed: their lifetime has no end the caps could wait for; build it on a recent blockhash',
  );
}

/** The same message on another blockhash, re-encoded with kit and decoded again so every field is checked. */
function onBlockhash(tx: DecodedTransaction, blockhash: string): DecodedTransaction {
  const message = { ...tx.message, lifetimeToken: blockhash as Blockhash };
  const messageBytes = new Uint8Array(getCompiledTransactionMessageEncoder().encode(message));
  const wire = new Uint8Array(1 + tx.signatures.length * 64 + messageBytes.length);
  wire[0] = tx.signatures.length; // at most 12 signers fit a packet: a one-byte short-vec
  wire.set(messageBytes, 1 + tx.signatures.length * 64);
  return decodeWireTransaction(wire);
}

/**
 * Every account of the message. Tables kept from an earlier read are used when `kept` and they hold every index
 * the message uses; the others are read in one call at the chain's current slot.
 */
async function resolveTables(
  chain: RpcClient,
  tx: DecodedTransaction,
  kept: boolean,
): Promise<{ ok: true; accounts: ResolvedAccounts } | { ok: false; message: string }> {
  const cache = lookupTableCacheOf(chain);
  const tables = new Map<string, LookupTable>();
  const toRead: string[] = [];
  const highest = new Map<string, number>();
  for (const lookup of tx.message.version === 0 ? (tx.message.addressTableLookups ?? []) : []) {
    const address = lookup.lookupTableAddress;
    const top = Math.max(highest.get(address) ?? -1, ...lookup.writableIndexes, ...lookup.readonlyIndexes);
    highest.set(address, top);
  }
  for (const [address, top] of highest) {
    const table = kept ? cache.kept(address, top) : null;
    if (table === null) toRead.push(address);
    else tables.set(address, table);
  }
  if (toRead.length > 0) {
    const read = await cache.read(chain, toRead);
    for (const address of toRead) {
      const decoded = read.get(address);
      if (decoded === undefined) return { ok: false, message: `lookup table ${address} was not read` };
      if (!decoded.ok) return decoded;
      tables.set(address, decoded.table);
    }
  }
  return resolveAccounts(tx.message, tables);
}
