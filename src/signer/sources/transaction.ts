/**
 * The transaction a flow checks, simulates and sends, independent of the payload format it came from.
 *
 * A `TransactionSource` turns a payload into a `PreparedTransaction` for a blockhash: the message exactly as it
 * will be signed, with every account it touches resolved, which is all the policy checks look at. Payload v1
 * compiles its instruction list into a legacy message here; a format that brings its own serialised message
 * (and lookup tables to resolve) is another source with the same shape.
 */
import type { KeySigner } from '../../keys/key-signer';
import type { Refusal } from '../refusals';
import { compileLegacyMessage, serializeTransaction, signatureToBase58 } from '../compile';
import type { CompiledMessage } from '../compile';
import type { PayloadV1 } from '../payload';
import type { PassName } from '../report';

/** The blockhash a message is built on, and the last block height at which it can land. */
export interface Lifetime {
  blockhash: string;
  lastValidBlockHeight: number;
}

export interface PreparedTransaction {
  /** The message as signed: its account list is the fully resolved one the checks run on. */
  msg: CompiledMessage;
  lifetime: Lifetime;
  /** Pubkeys of the signers the payload brings besides the key. */
  partialSigners: readonly string[];
  /** Signers that stand for accounts the transaction creates: they must not exist yet (v1's partial signers). */
  mustBeNew: readonly string[];
  /** Signatures other signers already made over `msg.bytes`, verified, by signer (v2). */
  presentSignatures: ReadonlyMap<string, Uint8Array>;
  /**
   * The fee payer when it is not the key (v2 only, e.g. an x402 facilitator): the key fills only its own slot,
   * and the fee payer signs (if it has not yet) and sends. Null when the key pays the fee.
   */
  foreignFeePayer: string | null;
  /**
   * The payload's own blockhash when the signer did not choose it (v2 without replace_blockhash): its validity
   * is read in the simulation's batch and an expired one refused. Null when the signer built on its own.
   */
  payloadBlockhash: string | null;
}

/** A prepared transaction, or why the payload's transaction cannot be judged or signed at all. */
export type Prepared =
  { ok: true; prepared: PreparedTransaction; passed: readonly PassName[] } | { ok: false; refusal: Refusal };

/** A prepared transaction on the wire, unsigned for check: what is simulated is exactly what is sent. */
export interface BuiltTransaction {
  prepared: PreparedTransaction;
  wireBase64: string;
  /**
   * The key's signature (base58) once signed. When the key is the fee payer it is the transaction's id on chain;
   * with a foreign fee payer the id is the fee payer's signature, which may not exist yet.
   */
  signature: string | null;
  /** Every signature slot is filled, so a simulation can verify signatures. */
  complete: boolean;
}

export interface SignedTransaction extends BuiltTransaction {
  signature: string;
}

export interface TransactionSource {
  readonly feePayer: string;
  /** Programs the instructions call, in order, a consecutive repeat once (the audit entry's `programs`). */
  readonly programs: readonly string[];
  /** Whether the fee payer may be another account than the key (v2: the key is then one of its signers). */
  readonly foreignFeePayerAllowed: boolean;
  /** Whether the signer may build the message on a fresh blockhash (v1; v2 with replace_blockhash). */
  readonly refreshable: boolean;
  /** `lifetime` is the chain's latest blockhash: what a refreshable source builds on, an upper bound otherwise. */
  prepare(lifetime: Lifetime): Promise<Prepared>;
  /** For check: nothing signed (the simulation replaces the blockhash and skips signature checks). */
  unsigned(prepared: PreparedTransaction): BuiltTransaction;
  /**
   * For sign: signed by the key, the fee payer, and by every partial signer the payload brings. Rejects when the
   * key's store cannot sign (a `key_store` SignerError): nothing was signed, so nothing can be sent.
   */
  signed(prepared: PreparedTransaction, key: KeySigner): Promise<SignedTransaction>;
}

/** Payload v1: the signer compiles the instruction list itself into a legacy message. */
export function v1Source(payload: PayloadV1): TransactionSource {
  const programs: string[] = [];
  for (const ix of payload.instructions)
    if (programs[programs.length - 1] !== ix.programId) programs.push(ix.programId);
  const partialSigners = payload.partialSigners.map((s) => s.pubkey);
  return {
    feePayer: payload.feePayer,
    programs,
    foreignFeePayerAllowed: false,
    refreshable: true,
    prepare: (lifetime) =>
      Promise.resolve({
        ok: true,
        passed: [],
        prepared: {
          msg: compileLegacyMessage(payload.feePayer, payload.instructions, lifetime.blockhash),
          lifetime,
          partialSigners,
          mustBeNew: partialSigners,
          presentSignatures: new Map(),
          foreignFeePayer: null,
          payloadBlockhash: null,
        },
      }),
    unsigned: (prepared) => ({
      prepared,
      wireBase64: Buffer.from(serializeTransaction(prepared.msg, new Map())).toString('base64'),
      signature: null,
      complete: false,
    }),
    async signed(prepared, key) {
      const { msg } = prepared;
      const own = await key.sign(msg.bytes);
      const signatures = new Map<string, Uint8Array>([[key.pubkey, own]]);
      for (const partial of payload.partialSigners) signatures.set(partial.pubkey, partial.sign(msg.bytes));
      return {
        prepared,
        wireBase64: Buffer.from(serializeTransaction(msg, signatures)).toString('base64'),
        signature: signatureToBase58(own),
        complete: true,
      };
    },
  };
}
